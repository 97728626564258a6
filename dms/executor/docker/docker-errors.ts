/** Reading dockerode's errors: HTTP status from the engine, or a socket error when it does not answer. */
import { ExecutorUnavailableError } from '../errors.js'

interface DockerodeError {
  statusCode?: number
  json?: { message?: string } | null
  reason?: string
  code?: string
  syscall?: string
  message?: string
}

/** The engine's HTTP status, if the error came from the engine. */
export function dockerStatus(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null ? (err as DockerodeError).statusCode : undefined
}

/** The engine's own message (without dockerode's "(HTTP code 400) unexpected - " prefix). */
export function dockerMessage(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err)
  const e = err as DockerodeError
  const message = e.json?.message ?? e.message ?? 'unknown error'
  return message.replace(/^\(HTTP code \d+\) [^-]*- /, '').trim()
}

/** Whether the error says the engine could not be reached at all (socket missing, refused, no permission). */
export function isEngineUnreachable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const e = err as DockerodeError
  return (
    e.statusCode === undefined &&
    (e.syscall === 'connect' || ['ECONNREFUSED', 'ENOENT', 'EACCES', 'ECONNRESET'].includes(e.code ?? ''))
  )
}

/** Runs one engine call, turning "nobody answers on the socket" into ExecutorUnavailableError. */
export async function engineCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (isEngineUnreachable(err)) throw new ExecutorUnavailableError('docker', dockerMessage(err))
    throw err
  }
}
