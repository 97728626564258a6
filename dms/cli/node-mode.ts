/**
 * `dms drain [--stop]`, `dms pause`, `dms resume`: a provider's lifecycle mode over its REST
 * socket (specs/node-lifecycle.md). A table by default, `--json` for the reply.
 */
import { ApiClient, ApiClientError, RouteMissingError } from '../api/client.js'
import { CliError, printData } from './output.js'
import { printTable } from './table.js'

interface ModeView {
  mode: string
  since: number
  liveBids: number
}

export type Opts = { socket: string; json?: boolean }

/** POSTs a mode change and prints the mode after. */
export async function modeCommand(o: Opts, path: string, body?: unknown): Promise<void> {
  const v = await new ApiClient(o.socket).ok<ModeView>('POST', path, body).catch((err: unknown) => {
    if (err instanceof ApiClientError || err instanceof RouteMissingError) throw new CliError(err.message)
    throw err
  })
  if (o.json) return printData(v)
  printTable(['MODE', 'SINCE', 'LIVE BIDS'], [[v.mode, new Date(v.since).toISOString(), v.liveBids]])
}
