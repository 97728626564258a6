/**
 * Why a node or a contract-db did not start, as one line naming the field to fix (exit 1). What
 * is not the user's to fix (a bug) stays an unexpected error.
 */
import { SocketInUseError } from '../../actors/local-socket.js'
import { listenProblems } from '../network/listen-check.js'
import { MetricsListenerConfigError } from '../metrics/listener.js'
import { KeyFileError, PassphraseRequiredError, WrongPassphraseError } from '../keys.js'
import { DataDirInUseError } from '../store/db.js'
import { CliError } from './output.js'
import { PassphraseRefusedError } from './passphrase.js'

const DEFAULT_LISTEN = ['/ip4/127.0.0.1/tcp/0']
const OS_REASONS: Record<string, string> = {
  EADDRINUSE: 'address in use',
  EADDRNOTAVAIL: 'address not available on this machine',
  EACCES: 'permission denied',
}

export async function startProblem(
  err: unknown,
  where: { dataDir: string; listen?: readonly string[]; apiTcpField?: string },
): Promise<never> {
  if (err instanceof DataDirInUseError)
    throw new CliError(
      `another dms is using the data directory ${where.dataDir}: stop it first, or choose another --data-dir`,
    )
  if (err instanceof SocketInUseError || err instanceof MetricsListenerConfigError)
    throw new CliError(err.message)
  const e = err as {
    name?: string
    message?: string
    code?: string
    syscall?: string
    address?: string
    port?: number
  }
  if (e?.name === 'UnsupportedListenAddressesError' || e?.name === 'InvalidMultiaddrError') {
    const listen = where.listen ?? DEFAULT_LISTEN
    const problems = await listenProblems(listen)
    throw new CliError(
      `listen (config "listen" or DMS_LISTEN): cannot listen on ${problems.length > 0 ? problems.join('; ') : `${listen.join(', ')}: ${e.message}`}`,
    )
  }
  if (e?.syscall === 'listen' && e.code !== undefined && OS_REASONS[e.code] !== undefined)
    throw new CliError(
      `${where.apiTcpField ?? 'api.tcp'}: cannot listen on ${e.address}:${e.port}: ${OS_REASONS[e.code]}`,
    )
  return keyProblem(err)
}

/** Key errors are the user's to fix: shown as a message, never a stack. */
export function keyProblem(err: unknown): never {
  if (
    err instanceof PassphraseRequiredError ||
    err instanceof WrongPassphraseError ||
    err instanceof KeyFileError ||
    err instanceof PassphraseRefusedError
  )
    throw new CliError(err.message)
  throw err
}
