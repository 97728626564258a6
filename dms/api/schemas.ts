/**
 * The REST API's request and reply shapes, declared once (TypeBox): Fastify validates requests
 * with them (ajv), the routes and ports take their types from them (`Static<>`), and the OpenAPI
 * document (dms/api/openapi.ts) shows them. Replies are documented, not enforced (specs/rest-api.md).
 * The job spec (dms/orchestrator/job-spec.ts) and the onboarding request
 * (dms/resources/onboard-request.ts) are declared next to the code that checks them.
 */
import { Type, type Static, type TProperties, type TSchema } from '@sinclair/typebox'
import { Const, StringEnum, StringMap, strictObject } from '../schema.js'

const opt = <T extends TSchema>(schema: T) => Type.Optional(schema)
const str = Type.String()
const int = Type.Integer()
const described = (description: string) => ({ description })
/** Any JSON object (a stored record shown as it is). */
const anyObject = Type.Unsafe<Record<string, unknown>>({ type: 'object' })
/** A reply object whose fields are documented and all optional (as the routes have always said). */
const reply = <P extends TProperties>(properties: P) => Type.Object(properties)

/** `{ error: { code, message, field? } }`: every error answer. */
export const ErrorReply = Type.Object({
  error: Type.Object({
    code: Type.String(described('stable, machine-readable (specs/rest-api.md, "Errors")')),
    message: str,
    field: opt(Type.String(described('the request field at fault, when there is one'))),
  }),
})
export type ApiError = Static<typeof ErrorReply>

// --- requests ----------------------------------------------------------------------------------

/** `:id` of the job routes. */
export const JobIdParams = strictObject({ id: Type.String({ minLength: 1, maxLength: 100 }) })
export type JobIdParams = Static<typeof JobIdParams>

/** Every state a job can be in (dms/orchestrator/job-record.ts). */
export const JOB_STATES = [
  'bidding',
  'selecting',
  'requesting',
  'contracting',
  'invoking',
  'running',
  'verifying',
  'settling',
  'cancelling',
  'retrying',
  'completed',
  'failed',
  'cancelled',
] as const
const queueId = Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$', description: 'a queue id' })

/** `GET /v1/jobs?state=&queue=&since=&limit=&cursor=`: one page, newest first. */
export const JobListQuery = strictObject({
  state: opt(StringEnum([...JOB_STATES])),
  queue: opt(queueId),
  since: opt(
    Type.Integer({ minimum: 0, maximum: 1e15, description: 'jobs created at or after (ms since the epoch)' }),
  ),
  limit: opt(Type.Integer({ minimum: 1, maximum: 1000, description: 'jobs per page; default 100' })),
  cursor: opt(
    Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[A-Za-z0-9_-]+$',
      description: '`next` of the previous page',
    }),
  ),
})
export type JobListQuery = Static<typeof JobListQuery>

/** `POST /v1/queues`. */
export const NewQueueBody = strictObject({
  tag: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]*$',
    description: 'a name for people',
  }),
  maxRetries: opt(
    Type.Integer({ minimum: 0, maximum: 10, description: 'default `retries` of its jobs that set none' }),
  ),
  idleExpirySeconds: opt(
    Type.Integer({
      minimum: 1,
      maximum: 31_536_000,
      description:
        'an active queue with no live job this long expires; default requester.queueIdleExpirySeconds',
    }),
  ),
})
export type NewQueueBody = Static<typeof NewQueueBody>

/** `POST /v1/jobs/prune`: each field defaults to the config's `requester.retention`. */
export const PruneBody = strictObject({
  maxAgeDays: opt(
    Type.Integer({ minimum: 1, maximum: 36_500, description: 'ended jobs created longer ago' }),
  ),
  keepLast: opt(
    Type.Integer({ minimum: 0, maximum: 10_000_000, description: 'ended jobs kept, newest first' }),
  ),
})
export type PruneBody = Static<typeof PruneBody>
export const PruneReply = reply({
  pruned: opt(int),
  blobsDeleted: opt(int),
  grantsRevoked: opt(int),
})
export type PruneReply = Static<typeof PruneReply>

/** `:id` of the queue routes. */
export const QueueIdParams = strictObject({ id: queueId })
export type QueueIdParams = Static<typeof QueueIdParams>

/** A yes/no query flag, as text (`?follow=true`). */
const flag = opt(StringEnum(['true', 'false', '1', '0']))
export const isSet = (v: string | undefined): boolean => v === 'true' || v === '1'

/** `GET /v1/jobs/:id/logs?follow=true&member=b`. */
export const LogsQuery = strictObject({
  follow: flag,
  member: opt(
    Type.String({
      minLength: 1,
      maxLength: 64,
      // A pod member's name (specs/job-spec.md, "Pods"; dms/protocol/run-rules.ts).
      pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$',
      description: "a pod's member: only its output",
    }),
  ),
})
export type LogsQuery = Static<typeof LogsQuery>

/** `GET /v1/blobs/:sha256`. */
export const BlobParams = strictObject({ sha256: Type.String({ pattern: '^[0-9a-f]{64}$', maxLength: 64 }) })
export type BlobParams = Static<typeof BlobParams>

/** `GET /v1/resources?refresh=true`. */
export const RefreshQuery = strictObject({ refresh: flag })
export type RefreshQuery = Static<typeof RefreshQuery>

// --- replies -----------------------------------------------------------------------------------

export const HealthReply = reply({ ok: opt(Const(true)) })

/** `POST /v1/jobs` (201) and `DELETE /v1/jobs/:id` (202). */
export const JobStateReply = reply({ id: opt(str), state: opt(str) })
export type JobStateReply = Static<typeof JobStateReply>

/** `POST /v1/quotes`: the bids a bid round brought (ranked, all released at once) and the declines. */
export const QuoteReply = reply({
  quoteId: opt(str),
  bids: opt(
    Type.Array(
      reply({
        provider: opt(str),
        bidId: opt(str),
        total: opt(Type.Integer(described('for the max duration, micro-tokens'))),
        pricePerHour: opt(int),
        earliestStart: opt(Type.Integer(described('ms since the epoch'))),
        expectedFinish: opt(Type.Integer(described('ms since the epoch'))),
        rank: opt(Type.Integer(described("1: the bid a job would take (the job's ranking)"))),
        why: opt(str),
      }),
    ),
  ),
  declines: opt(Type.Array(reply({ provider: opt(str), reasons: opt(Type.Array(str)) }))),
  released: opt(Type.Integer(described('bid releases delivered right after the round'))),
})
export type QuoteReply = Static<typeof QuoteReply>

export const JobSummary = reply({
  id: opt(str),
  name: opt(str),
  state: opt(str),
  createdAt: opt(int),
  provider: opt(str),
  queue: opt(str),
  rerunOf: opt(str),
  image: opt(str),
  price: opt(
    Type.Integer(
      described("what it costs so far: paid to the provider once settled, else the winning bid's total"),
    ),
  ),
})
export const JobListReply = reply({
  jobs: opt(Type.Array(JobSummary)),
  next: opt(Type.String(described('the cursor of the next page; absent on the last page'))),
})
export type JobListReply = Static<typeof JobListReply>

/** `POST /v1/workflows` (201) and `DELETE /v1/workflows/:id` (202). */
export const WorkflowStateReply = JobStateReply
export const WorkflowSummary = reply({
  id: opt(str),
  name: opt(str),
  state: opt(str),
  createdAt: opt(int),
  tasks: opt(int),
  completed: opt(int),
})
export const WorkflowListReply = reply({ workflows: opt(Type.Array(WorkflowSummary)) })
export type WorkflowListReply = Static<typeof WorkflowListReply>
/** `GET /v1/workflows/:id`: the stored WorkflowRecord with `state` (the per-task table in `tasks`). */
export const WorkflowReply = anyObject

/** `:id` and `:task` of `POST /v1/workflows/:id/tasks/:task/outputs`. */
export const WorkflowTaskParams = strictObject({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  task: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' }),
})
/** One task's outputs, fetched to the requester: then served by `/v1/jobs/<jobId>/outputs...`. */
export const TaskOutputsReply = reply({
  task: opt(str),
  pod: opt(
    Type.String(
      described("the task's pod: its job is the pod's, and `files` are the task's, under `<task>/`"),
    ),
  ),
  jobId: opt(Type.String(described("the task's job: its outputs routes serve the files"))),
  files: opt(Type.Array(reply({ path: opt(str), sha256: opt(str), size: opt(int) }))),
  archive: opt(Type.Union([reply({ sha256: opt(str), size: opt(int) }), Type.Null()])),
})

/** `GET /v1/jobs/:id`: the stored JobRecord with `state`, `allocation` and `usage`. */
export const JobReply = anyObject

/** A queue: `POST|GET|DELETE /v1/queues/:id`, `POST /v1/queues/:id/drain`. */
export const QueueReply = reply({
  id: opt(str),
  tag: opt(str),
  maxRetries: opt(int),
  idleExpirySeconds: opt(int),
  state: opt(StringEnum(['active', 'draining', 'drained', 'cancelled', 'expired'])),
  createdAt: opt(int),
  lastActivityAt: opt(int),
  history: opt(Type.Array(anyObject)),
  counts: opt(reply({ active: opt(int), completed: opt(int), failed: opt(int), cancelled: opt(int) })),
})
export type QueueView = Static<typeof QueueReply>
export const QueueListReply = reply({ queues: opt(Type.Array(QueueReply)) })

export const PeerSummary = reply({
  peerId: opt(str),
  addrs: opt(Type.Array(str)),
  direction: opt(StringEnum(['inbound', 'outbound'])),
  roles: opt(
    Type.Array(
      StringEnum(['requester', 'provider', 'contract-db', 'relay']),
      described('the roles the peer announces (absent: not a DMS node, or not identified yet)'),
    ),
  ),
  connection: opt(
    StringEnum(['direct', 'relayed'], described('direct when any connection to it is direct, else relayed')),
  ),
  latencyMs: opt(Type.Number(described("round-trip time of the connection monitor's last ping, ms"))),
  bidTopic: opt(Type.Boolean(described('a live subscriber of the bid request topic (a provider or relay)'))),
  gossipScore: opt(Type.Number(described('its gossipsub score at this node'))),
  graylisted: opt(
    Type.Boolean(described('its score is below the graylist threshold: every gossip RPC from it is dropped')),
  ),
})
export type PeerSummary = Static<typeof PeerSummary>
export const PeerListReply = reply({ peers: opt(Type.Array(PeerSummary)) })

export const AllocationSummary = reply({
  allocationId: opt(str),
  jobId: opt(str),
  contractId: opt(str),
  requester: opt(Type.String(described('peer id'))),
  state: opt(str),
  history: opt(Type.Array(anyObject)),
  result: opt(anyObject),
  /** From the provider's books: how its contract was paid. */
  payment: opt(
    reply({
      escrow: int,
      settleBy: opt(int),
      status: Type.Union([Type.Literal('outstanding'), Type.Literal('settled'), Type.Literal('claimed')]),
      paid: opt(int),
      refunded: opt(int),
      reason: opt(str),
      claimError: opt(str),
    }),
  ),
  usage: opt(
    reply({
      cpuSeconds: opt(Type.Number()),
      memoryBytes: opt(int),
      logBytes: opt(int),
      wallSeconds: opt(Type.Number()),
    }),
  ),
  costSoFar: opt(Type.Integer(described('micro-tokens: the wall time so far at the contract price'))),
})
export type AllocationSummary = Static<typeof AllocationSummary>

const RequesterBooks = reply({ paid: int, unpaid: int, claimed: int })
export const EarningsReply = reply({
  paid: int,
  claimed: int,
  refunded: int,
  outstanding: int,
  contracts: reply({ settled: int, claimed: int, open: int }),
  requesters: StringMap(RequesterBooks),
})
export type EarningsReply = Static<typeof EarningsReply>
export const AllocationListReply = reply({ allocations: opt(Type.Array(AllocationSummary)) })

/** The provider's lifecycle mode: `GET|POST /v1/node/...`, and `mode` in `/v1/info`. */
export const ModeReply = reply({
  mode: opt(StringEnum(['ready', 'paused', 'draining', 'drained'])),
  since: opt(Type.Integer(described('ms since the epoch'))),
  liveBids: opt(Type.Integer(described('bids not yet ended (reservations, contracts, runs)'))),
})
export type ModeView = Static<typeof ModeReply>

/** `POST /v1/node/drain`. */
export const DrainBody = strictObject({
  stop: opt(Type.Boolean(described('stop the node once drained'))),
})

const counts = StringMap(int)
export const InfoReply = reply({
  peerId: opt(str),
  version: opt(str),
  addrs: opt(Type.Array(str)),
  roles: opt(reply({ requester: opt(Type.Boolean()), provider: opt(Type.Boolean()) })),
  bidTopicPeers: opt(int),
  rejections: opt(counts),
  late: opt(counts),
  approval: opt(
    Type.Array(
      reply({
        contractDb: opt(str),
        approved: opt(Type.Boolean()),
        expiresAt: opt(Type.Integer(described('ms since the epoch'))),
        lastError: opt(reply({ code: opt(str), message: opt(str), at: opt(int) })),
      }),
      described("this node's approval credential from each contract-db it uses"),
    ),
  ),
  payloadsRefused: opt(StringMap(counts, described('payloads refused at decode, by behaviour, then reason'))),
  bidsIgnored: opt(StringMap(int, described('requester: bids not ranked, by reason'))),
  bidRequestsIgnored: opt(
    StringMap(int, described('provider: bid requests dropped without an answer, by reason')),
  ),
  declines: opt(StringMap(int, described('provider: bid requests declined, by reason'))),
  topics: opt(
    reply({
      subscribed: opt(Type.Array(str, described('gossip topics this node is subscribed to'))),
      known: opt(
        Type.Array(
          reply({ topic: opt(str), peers: opt(int) }),
          described('topics its connected peers are subscribed to, with their live subscribers'),
        ),
      ),
    }),
  ),
  capacity: opt(
    reply({
      queued: opt(Type.Integer(described('requester: queued jobs waiting for capacity news now'))),
      woken: opt(Type.Integer(described('requester: queued jobs woken by capacity news'))),
      wokenByJoins: opt(
        Type.Integer(described('requester: queued jobs woken because a provider joined the bid topic')),
      ),
      news: opt(StringMap(int, described('requester: capacity news kept (`kept`) and ignored, by reason'))),
      announced: opt(Type.Integer(described('provider: capacity news published'))),
    }),
  ),
  mode: opt(ModeReply),
})
export type InfoReply = Static<typeof InfoReply>

/** `POST /v1/topics/subscribe|unsubscribe`: one DMS topic (specs/queueing.md, "Topics"). */
export const TopicBody = Type.Object(
  {
    topic: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'a DMS topic name, e.g. /dms/capacity/1',
    }),
  },
  { additionalProperties: false },
)
export type TopicBody = Static<typeof TopicBody>

/** `GET /v1/topics` and the topic routes. */
export const TopicsReply = Type.Object({
  subscribed: Type.Array(Type.String(), { description: 'gossip topics this node is subscribed to' }),
  known: Type.Array(Type.Object({ topic: Type.String(), peers: Type.Integer() }), {
    description: 'topics its connected peers are subscribed to, with their live subscribers',
  }),
  optional: Type.Array(
    Type.Object({ topic: Type.String(), subscribed: Type.Boolean(), what: Type.String() }),
    { description: 'the topics this node may join or leave, and whether it is subscribed now' },
  ),
})
export type TopicsReply = Static<typeof TopicsReply>

/** `GET /v1/resources` and the offer routes: a ResourcesView (specs/resources.md). */
export const ResourcesReply = anyObject
export const OpenApiReply = anyObject
export const MetricsReply = Type.String()
