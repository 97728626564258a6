/** `dms drain [--stop]`, `dms pause`, `dms resume`: a provider's mode (specs/node-lifecycle.md). */
import type { Opts } from '../node-mode.js'
import type { RegisterCommand } from './types.js'

const mode = async (o: Opts, path: string, body: unknown) =>
  (await import('../node-mode.js')).modeCommand(o, path, body)

export const registerMode: RegisterCommand = (program, { socketOpt }) => {
  program
    .command('drain')
    .description(
      'provider: stop bidding, free open reservations and finish the work in progress (then "drained")',
    )
    .option('--stop', 'stop the node once drained')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action((o: Opts & { stop?: boolean }) => mode(o, '/v1/node/drain', { stop: o.stop === true }))
  program
    .command('pause')
    .description('provider: decline new jobs ("paused"); work in progress goes on')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action((o: Opts) => mode(o, '/v1/node/pause', {}))
  program
    .command('resume')
    .description('provider: take new jobs again (from paused, draining or drained)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action((o: Opts) => mode(o, '/v1/node/resume', {}))
}
