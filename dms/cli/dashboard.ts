import { spawn } from 'node:child_process'
import { ApiClient, ApiClientError, DaemonNotRunningError } from '../api/client.js'
import { CliError, print, printJson } from './output.js'

/**
 * `dms dashboard` and `dms contract-db dashboard`: a one-time login link for the node's (or the
 * contract-db's) web dashboard (POST /v1/dashboard/login on
 * the unix socket; specs/dashboard.md). The link holds a code good once for a minute, never the
 * API token. `--open` hands it to xdg-open when there is one.
 */
export async function dashboardCommand(opts: {
  socket: string
  open?: boolean
  json?: boolean
  /** What to say when nothing answers on the socket (the contract-db's own words). */
  notRunning?: string
}): Promise<void> {
  const link = await new ApiClient(opts.socket)
    .ok<{ url: string; expiresAt: number }>('POST', '/v1/dashboard/login')
    .catch((err: unknown) => {
      if (err instanceof ApiClientError) throw new CliError(err.message)
      if (err instanceof DaemonNotRunningError && opts.notRunning !== undefined)
        throw new CliError(opts.notRunning)
      throw err
    })
  if (opts.json) printJson(link)
  else
    print(
      `${link.url}\n(one-time link, good for one sign-in until ${new Date(link.expiresAt).toISOString()})`,
    )
  if (opts.open) {
    const opened = await new Promise<boolean>((resolve) => {
      const child = spawn('xdg-open', [link.url], { stdio: 'ignore', detached: true })
      child.once('error', () => resolve(false))
      child.once('spawn', () => {
        child.unref()
        resolve(true)
      })
    })
    if (!opened) process.stderr.write('dms dashboard: no xdg-open here: open the link above in a browser\n')
  }
}
