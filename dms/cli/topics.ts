/**
 * `dms topics [sub|unsub <topic>]`: the node's gossip topics over its REST socket (GET /v1/topics,
 * POST /v1/topics/subscribe|unsubscribe): subscribed, known from peers, and the optional ones a
 * node may join or leave (specs/queueing.md, "Topics"). A table by default, `--json` for the reply.
 */
import type { Command } from 'commander'
import { ApiClient, ApiClientError, RouteMissingError } from '../api/client.js'
import { CliError, printJson } from './output.js'
import { printTable } from './table.js'

interface TopicsView {
  subscribed: string[]
  known: Array<{ topic: string; peers: number }>
  optional: Array<{ topic: string; subscribed: boolean; what: string }>
}

type Opts = { socket: string; json?: boolean }

async function call(o: Opts, method: 'GET' | 'POST', path: string, body?: unknown): Promise<void> {
  const v = await new ApiClient(o.socket).ok<TopicsView>(method, path, body).catch((err: unknown) => {
    if (err instanceof ApiClientError || err instanceof RouteMissingError) throw new CliError(err.message)
    throw err
  })
  if (o.json) return printJson(v)
  const topics = [
    ...new Set([...v.subscribed, ...v.known.map((k) => k.topic), ...v.optional.map((x) => x.topic)]),
  ].sort()
  printTable(
    ['TOPIC', 'SUBSCRIBED', 'PEERS', 'OPTIONAL'],
    topics.map((t) => [
      t,
      v.subscribed.includes(t) ? 'yes' : 'no',
      v.known.find((k) => k.topic === t)?.peers ?? 0,
      v.optional.some((x) => x.topic === t) ? 'yes' : 'no',
    ]),
  )
}

export function registerTopicsCommands(program: Command, socketOpt: [string, string, string]): void {
  const topics = program
    .command('topics')
    .description(
      'list the gossip topics: subscribed, known from peers (live subscribers), optional (a requester may leave /dms/capacity/1)',
    )
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action((o: Opts) => call(o, 'GET', '/v1/topics'))
  topics
    .command('sub <topic>')
    .description('join an optional topic (kept across restarts)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action((topic: string, o: Opts) => call(o, 'POST', '/v1/topics/subscribe', { topic }))
  topics
    .command('unsub <topic>')
    .description('leave an optional topic (kept across restarts), e.g. /dms/capacity/1 on a requester')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action((topic: string, o: Opts) => call(o, 'POST', '/v1/topics/unsubscribe', { topic }))
}
