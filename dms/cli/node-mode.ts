/**
 * `dms drain [--stop]`, `dms pause`, `dms resume`: a provider's lifecycle mode over its REST
 * socket (specs/node-lifecycle.md). A table by default, `--json` for the reply.
 */
import type { Command } from 'commander'
import { ApiClient, ApiClientError, RouteMissingError } from '../api/client.js'
import { CliError, printJson } from './output.js'
import { printTable } from './table.js'

interface ModeView {
  mode: string
  since: number
  liveBids: number
}

type Opts = { socket: string; json?: boolean }

async function call(o: Opts, path: string, body?: unknown): Promise<void> {
  const v = await new ApiClient(o.socket).ok<ModeView>('POST', path, body).catch((err: unknown) => {
    if (err instanceof ApiClientError || err instanceof RouteMissingError) throw new CliError(err.message)
    throw err
  })
  if (o.json) return printJson(v)
  printTable(['MODE', 'SINCE', 'LIVE BIDS'], [[v.mode, new Date(v.since).toISOString(), v.liveBids]])
}

export function registerModeCommands(program: Command, socketOpt: [string, string, string]): void {
  program
    .command('drain')
    .description(
      'provider: stop bidding, free open reservations and finish the work in progress (then "drained")',
    )
    .option('--stop', 'stop the node once drained')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action((o: Opts & { stop?: boolean }) => call(o, '/v1/node/drain', { stop: o.stop === true }))
  program
    .command('pause')
    .description('provider: decline new jobs ("paused"); work in progress goes on')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action((o: Opts) => call(o, '/v1/node/pause', {}))
  program
    .command('resume')
    .description('provider: take new jobs again (from paused, draining or drained)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action((o: Opts) => call(o, '/v1/node/resume', {}))
}
