/**
 * `dms topics [sub|unsub <topic>]`: the node's gossip topics over its REST socket (GET /v1/topics,
 * POST /v1/topics/subscribe|unsubscribe): subscribed, known from peers, and the optional ones a
 * node may join or leave (specs/queueing.md, "Topics"). A table by default, `--json` for the reply.
 */
import { ApiClient, ApiClientError, RouteMissingError } from '../api/client.js'
import { CliError, printData } from './output.js'
import { printTable } from './table.js'

interface TopicsView {
  subscribed: string[]
  known: Array<{ topic: string; peers: number }>
  optional: Array<{ topic: string; subscribed: boolean; what: string }>
}

export type Opts = { socket: string; json?: boolean }

/** Calls the topics route and prints its reply (a table, or the chosen -o format). */
export async function topicsCommand(
  o: Opts,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<void> {
  const v = await new ApiClient(o.socket).ok<TopicsView>(method, path, body).catch((err: unknown) => {
    if (err instanceof ApiClientError || err instanceof RouteMissingError) throw new CliError(err.message)
    throw err
  })
  if (o.json) return printData(v)
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
