/**
 * Claiming a unix socket path before listening on it. A file left by a process that died is
 * removed; a socket something still answers on is never taken over: removing it would leave the
 * running process unreachable. The owner's pid is kept in `<socket>.pid` so that the refusal can
 * name it.
 */
import { connect } from 'node:net'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { DmsError } from './errors.js'

export class SocketInUseError extends DmsError<{ socket: string; pid?: number }> {
  constructor(socket: string, pid: number | undefined) {
    super(
      'SOCKET_IN_USE',
      `socket ${socket} in use by a running dms${pid !== undefined ? ` (pid ${pid})` : ''}: stop it, or give this one another data dir or api.socket`,
      { socket, pid },
    )
  }
}

/** Whether a process accepts connections on `path` (false when nothing listens or no file). */
export function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ path })
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })
}

const pidFile = (path: string) => `${path}.pid`

/**
 * Makes `path` free to listen on: refuses (SocketInUseError) when a process answers there,
 * else removes a stale file. Call `markOwned` once listening.
 */
export async function claimSocket(path: string): Promise<void> {
  if (await socketAnswers(path)) {
    const text = await readFile(pidFile(path), 'utf8').catch(() => '')
    const pid = /^\d{1,10}$/.test(text.trim()) ? Number(text.trim()) : undefined
    throw new SocketInUseError(path, pid)
  }
  await rm(path, { force: true })
}

/** Records this process as the socket's owner (read by a second process's refusal). */
export async function markOwned(path: string): Promise<void> {
  await writeFile(pidFile(path), `${process.pid}\n`, { mode: 0o600 })
}

/** Removes the owner record at stop (only if it is still ours). */
export async function releaseSocket(path: string): Promise<void> {
  const text = await readFile(pidFile(path), 'utf8').catch(() => '')
  if (text.trim() === String(process.pid)) await rm(pidFile(path), { force: true })
}
