/** `dms action post|status`: actions run on registered workers, with a result cache (specs/functions.md). */
import type { Opts } from '../action.js'
import type { RegisterCommand } from './types.js'

const actions = () => import('../action.js')

export const registerAction: RegisterCommand = (program, { socketOpt }) => {
  const action = program
    .command('action')
    .description('actions: a function and its inputs by hash, run on a registered worker (post, status)')
  action
    .command('post')
    .description(
      'post the actions in a JSON file (one, a list, or { "actions": [...] }) as one batch; a verified result answers from the cache',
    )
    .requiredOption('-f, --file <file>', 'the action descriptors (JSON)')
    .requiredOption('--max-price <micro-tokens>', "each action's job's price ceiling")
    .option('--queue <id>', 'the queue the jobs join')
    .option('--no-cache', 'run even actions with a verified result (a non-deterministic function)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (o: Opts & { file: string; maxPrice: string; queue?: string; cache?: boolean }) =>
      (await actions()).actionPostCommand(o),
    )
  action
    .command('status')
    .alias('describe')
    .description("an action's state, job, outputs by hash (--json: with its history)")
    .argument('<id>', 'the action id (64 hex)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: Opts) => (await actions()).actionStatusCommand(id, o))
}
