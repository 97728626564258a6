import { spawn } from 'node:child_process'
import { ApiClient, ApiClientError } from '../api/client.js'
import { CliError, print, printJson } from './output.js'

/**
 * `dms dashboard`: a one-time login link for the node's web dashboard (POST /v1/dashboard/login on
 * the unix socket; specs/dashboard.md). The link holds a code good once for a minute, never the
 * API token. `--open` hands it to xdg-open when there is one.
 */
export async function dashboardCommand(opts: {
  socket: string
  open?: boolean
  json?: boolean
}): Promise<void> {
  const link = await new ApiClient(opts.socket)
    .ok<{ url: string; expiresAt: number }>('POST', '/v1/dashboard/login')
    .catch((err: unknown) => {
      if (err instanceof ApiClientError) throw new CliError(err.message)
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
