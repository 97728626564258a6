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

/** A yes/no query flag, as text (`?follow=true`). */
const flag = opt(StringEnum(['true', 'false', '1', '0']))
export const isSet = (v: string | undefined): boolean => v === 'true' || v === '1'

/** `GET /v1/jobs/:id/logs?follow=true`. */
export const LogsQuery = strictObject({ follow: flag })
export type LogsQuery = Static<typeof LogsQuery>

/** `GET /v1/resources?refresh=true`. */
export const RefreshQuery = strictObject({ refresh: flag })
export type RefreshQuery = Static<typeof RefreshQuery>

// --- replies -----------------------------------------------------------------------------------

export const HealthReply = reply({ ok: opt(Const(true)) })

/** `POST /v1/jobs` (201) and `DELETE /v1/jobs/:id` (202). */
export const JobStateReply = reply({ id: opt(str), state: opt(str) })
export type JobStateReply = Static<typeof JobStateReply>

export const JobSummary = reply({
  id: opt(str),
  name: opt(str),
  state: opt(str),
  createdAt: opt(int),
  provider: opt(str),
})
export const JobListReply = reply({ jobs: opt(Type.Array(JobSummary)) })
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

/** `GET /v1/jobs/:id`: the stored JobRecord with `state`, `allocation` and `usage`. */
export const JobReply = anyObject

export const PeerSummary = reply({
  peerId: opt(str),
  addrs: opt(Type.Array(str)),
  direction: opt(StringEnum(['inbound', 'outbound'])),
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
})
export type AllocationSummary = Static<typeof AllocationSummary>
export const AllocationListReply = reply({ allocations: opt(Type.Array(AllocationSummary)) })

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
})
export type InfoReply = Static<typeof InfoReply>

/** `GET /v1/resources` and the offer routes: a ResourcesView (specs/resources.md). */
export const ResourcesReply = anyObject
export const OpenApiReply = anyObject
export const MetricsReply = Type.String()
