/** `dms queue create|list|status|drain|cancel`: the requester's queues (specs/queues.md). */
import type { Opts } from '../queue.js'
import type { RegisterCommand } from './types.js'

const queues = () => import('../queue.js')

export const registerQueue: RegisterCommand = (program, { socketOpt }) => {
  const queue = program
    .command('queue')
    .description('group jobs in queues: create, list, status, drain, cancel')
  queue
    .command('create')
    .description(
      'create a queue; post jobs to it with dms job run --queue <tag>, or "queue": <id> in their spec',
    )
    .argument('<tag>', 'a name for people (1-64 characters)')
    .option('--max-retries <n>', 'default retries of its jobs that set none (0-10)')
    .option('--idle-expiry <seconds>', 'expire after this long with no live job (default: the node config)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (tag: string, o: Opts & { maxRetries?: string; idleExpiry?: string }) =>
      (await queues()).queueCreateCommand(tag, o),
    )
  queue
    .command('list')
    .alias('ls')
    .description('every queue, newest first, with the counts of its jobs')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (o: Opts) => (await queues()).queueListCommand(o))
  queue
    .command('status')
    .alias('describe')
    .description("a queue's state, counts and history")
    .argument('<id>', 'queue id, tag or unique id prefix')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: Opts) => (await queues()).queueStatusCommand(id, o))
  queue
    .command('drain')
    .description('refuse new jobs; the queue ends "drained" with its last live job')
    .argument('<id>', 'queue id, tag or unique id prefix')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: Opts) => (await queues()).queueEndCommand('drain', id, o))
  queue
    .command('cancel')
    .alias('stop')
    .description('cancel the queue and every live job of it')
    .argument('<id>', 'queue id, tag or unique id prefix')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: Opts) => (await queues()).queueEndCommand('cancel', id, o))
}
