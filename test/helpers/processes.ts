/**
 * A DMS node in its own process (`dms run`, built or from source: dms-entry.ts), for tests that
 * SIGKILL a node. Resolves once the node prints its ready line; its JSON log lines (stderr) can
 * be awaited.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { loadOrCreateKey } from '../../dms/keys.js'
import { dmsEntry } from './dms-entry.js'

const ROOT = join(import.meta.dirname, '../..')

export interface DmsProcess {
  child: ChildProcess
  peerId: string
  socket: string | null
  exited: Promise<unknown>
  /** Resolves with the first log line (from now on) for which `test` is true. */
  logLine(test: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>
}

/**
 * Creates the sealed node key of `dataDir` (as `dms init` does, with the passphrase the processes
 * here use) and returns its peer id: the contract-db can approve a node before it first starts.
 */
export async function peerIdOfDataDir(dataDir: string): Promise<string> {
  const { key } = await loadOrCreateKey(dataDir, () => Promise.resolve('test passphrase'))
  return peerIdFromPrivateKey(privateKeyFromRaw(key.libp2pRaw())).toString()
}

export function startDms(
  configPath: string,
  logLevel = 'info',
  env: Record<string, string> = {},
): Promise<DmsProcess> {
  const child = spawn(process.execPath, [...dmsEntry(), 'run', '--config', configPath], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DMS_LOG_LEVEL: logLevel, DMS_PASSPHRASE: 'test passphrase', ...env },
  })
  let tail = ''
  const waiters = new Set<{
    test: (l: Record<string, unknown>) => boolean
    resolve: (l: Record<string, unknown>) => void
  }>()
  createInterface({ input: child.stderr }).on('line', (text) => {
    tail = (tail + text + '\n').slice(-4000)
    let line: Record<string, unknown>
    try {
      line = JSON.parse(text) as Record<string, unknown>
    } catch {
      return
    }
    for (const w of [...waiters])
      if (w.test(line)) {
        waiters.delete(w)
        w.resolve(line)
      }
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`dms exited (${code}) before ready:\n${tail}`)))
    createInterface({ input: child.stdout }).on('line', (text) => {
      try {
        const ready = JSON.parse(text) as { event?: string; peerId: string; socket: string | null }
        if (ready.event === 'ready')
          resolve({
            child,
            peerId: ready.peerId,
            socket: ready.socket,
            exited,
            logLine: (test) => new Promise((r) => waiters.add({ test, resolve: r })),
          })
      } catch {
        /* not the ready line */
      }
    })
  })
}

/** A TCP port free on 127.0.0.1 now (for a node that must come back on the same address). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}
