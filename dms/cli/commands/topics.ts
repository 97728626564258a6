/** `dms topics [sub|unsub <topic>]` (specs/queueing.md, "Topics"). */
import type { Opts } from '../topics.js'
import type { RegisterCommand } from './types.js'

const t = () => import('../topics.js')

export const registerTopics: RegisterCommand = (program, { socketOpt }) => {
  const topics = program
    .command('topics')
    .description(
      'list the gossip topics: subscribed, known from peers (live subscribers), optional (a requester may leave /dms/capacity/1)',
    )
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (o: Opts) => (await t()).topicsCommand(o, 'GET', '/v1/topics'))
  topics
    .command('sub <topic>')
    .description('join an optional topic (kept across restarts)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (topic: string, o: Opts) =>
      (await t()).topicsCommand(o, 'POST', '/v1/topics/subscribe', { topic }),
    )
  topics
    .command('unsub <topic>')
    .description('leave an optional topic (kept across restarts), e.g. /dms/capacity/1 on a requester')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (topic: string, o: Opts) =>
      (await t()).topicsCommand(o, 'POST', '/v1/topics/unsubscribe', { topic }),
    )
}
