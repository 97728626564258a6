/**
 * `GET /v1/events`: the node's change feeds as server-sent events, for the dashboard and the CLI's
 * `--watch` (specs/dashboard.md, "Live updates"): `job` (a stored change of a job: `{ id, state }`),
 * `log` (a piece of a running job's output: `{ jobId, stream, data, member? }`, `member` a pod's), `allocation` (a stored
 * change of a provider's allocation: `{ id, state }`), `peer` (`{ peerId, connected }`) and
 * `workflow` (a stored change of a workflow: `{ id, state }`). `?only=job,workflow` keeps those
 * kinds only. A bounded number of streams at once (the one over it gets `503 TOO_MANY_STREAMS`);
 * a comment line every 20 s keeps idle connections open. Nothing is polled: each event comes from
 * the job store's own feed.
 */
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { apiError } from './errors.js'
import type { AllocationsPort, JobsPort, PeersPort, WorkflowsPort } from './ports.js'

/** Streams open at once, per listener. */
export const MAX_EVENT_STREAMS = 8
const KEEPALIVE_MS = 20_000

/** The kinds of event a stream carries (all unless `?only=` names some). */
export const EVENT_KINDS = ['job', 'log', 'allocation', 'peer', 'workflow'] as const
export type EventKind = (typeof EVENT_KINDS)[number]

const EventsQuery = Type.Object(
  {
    only: Type.Optional(
      Type.String({
        maxLength: 64,
        pattern: `^(${EVENT_KINDS.join('|')})(,(${EVENT_KINDS.join('|')}))*$`,
        description: `only these kinds of event, comma-separated (${EVENT_KINDS.join(', ')}); default all`,
      }),
    ),
  },
  { additionalProperties: false },
)

export interface EventsOptions {
  jobs: JobsPort
  allocations: AllocationsPort
  peers: PeersPort
  workflows?: WorkflowsPort
  max?: number
}

/** Subscribes, or a no-op when the node has no such feed (no requester role). */
function feedOf(subscribe: () => () => void): () => void {
  try {
    return subscribe()
  } catch {
    return () => {}
  }
}

export function eventsRoutes(app: FastifyInstance, o: EventsOptions): Promise<void> {
  const max = o.max ?? MAX_EVENT_STREAMS
  let open = 0
  // Open streams end when the server closes (else closing would wait for the browsers).
  const streams = new Set<{ end: () => void }>()
  app.addHook('preClose', (done) => {
    for (const s of streams) s.end()
    done()
  })
  app.get<{ Querystring: { only?: string } }>(
    '/v1/events',
    {
      schema: { querystring: EventsQuery },
      config: {
        doc: {
          summary:
            "server-sent events from the node's change feeds: job (id, state), log (jobId, stream, data, member of a pod), allocation (id, state), peer (peerId, connected), workflow (id, state); ?only= keeps some kinds",
          responses: {
            200: { description: 'the stream', contentType: 'text/event-stream', schema: { type: 'string' } },
            503: { description: `TOO_MANY_STREAMS: ${max} streams are open already` },
          },
        },
      },
    },
    async (req, rep) => {
      if (open >= max)
        return rep
          .status(503)
          .send(apiError('TOO_MANY_STREAMS', `${max} event streams are open already: close one first`))
      open++
      // The headers the onSend hooks would set, written by hand: the stream bypasses them.
      const headers = rep.getHeaders() as Record<string, string>
      rep.hijack()
      const res = rep.raw
      res.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      })
      const send = (event: string, data: unknown) =>
        res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
      res.write(': dms events\n\n')
      const only = req.query.only?.split(',')
      const wanted = (kind: EventKind) => only === undefined || only.includes(kind)
      // A kind not asked for is not subscribed to: a watcher of jobs gets no log bytes.
      const feed = (kind: EventKind, subscribe: () => () => void) =>
        wanted(kind) ? feedOf(subscribe) : () => {}
      const offJob = feed('job', () =>
        o.jobs.onChange((j) => send('job', { id: j.record.id, state: j.state })),
      )
      const offWorkflow = feed(
        'workflow',
        () =>
          o.workflows?.onChange?.((w) => send('workflow', { id: w.record.id, state: w.state })) ?? (() => {}),
      )
      const offLog = feed('log', () =>
        o.jobs.onLog((jobId, l) =>
          send('log', {
            jobId,
            stream: l.stream,
            data: l.data,
            ...(l.member !== undefined ? { member: l.member } : {}),
          }),
        ),
      )
      const offAllocation = feed(
        'allocation',
        () => o.allocations.onChange?.((id, state) => send('allocation', { id, state })) ?? (() => {}),
      )
      const offPeer = feed(
        'peer',
        () => o.peers.onChange?.((peerId, connected) => send('peer', { peerId, connected })) ?? (() => {}),
      )
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS).unref()
      let closed = false
      const stream = { end: () => res.end() }
      streams.add(stream)
      req.raw.once('close', () => {
        if (closed) return
        closed = true
        open--
        streams.delete(stream)
        clearInterval(keepalive)
        offJob()
        offWorkflow()
        offLog()
        offAllocation()
        offPeer()
      })
    },
  )
  return Promise.resolve()
}
