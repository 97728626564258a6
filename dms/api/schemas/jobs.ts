/** The job routes' shapes: `/v1/jobs...`, `/v1/quotes` and `/v1/blobs/:sha256` (specs/rest-api.md). */
import { Type, type Static } from '@sinclair/typebox'
import { StringEnum, strictObject } from '../../schema.js'
import { described, flag, int, opt, reply, str } from './common.js'
import { queueId } from './queues.js'
import type { Settlement, SignedReceipt, Usage } from '../../contracts/model.js'
import { jobSpecSchema, type JobSpec } from '../../orchestrator/job-spec.js'
import type { LiveUsage } from '../../protocol/messages.js'

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

/** `GET /v1/jobs/:id/logs?follow=true&member=b`. */
export const LogsQuery = strictObject({
  follow: flag,
  member: opt(
    Type.String({
      minLength: 1,
      maxLength: 64,
      // A pod member's name (specs/job-spec.md, "Pods"; dms/workload/run-rules.ts).
      pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$',
      description: "a pod's member: only its output",
    }),
  ),
})
export type LogsQuery = Static<typeof LogsQuery>

/** `GET /v1/blobs/:sha256`. */
export const BlobParams = strictObject({ sha256: Type.String({ pattern: '^[0-9a-f]{64}$', maxLength: 64 }) })
export type BlobParams = Static<typeof BlobParams>

/** `POST /v1/jobs` (201) and `DELETE /v1/jobs/:id` (202). */
export const JobStateReply = reply({ id: str, state: str })
export type JobStateReply = Static<typeof JobStateReply>

/** `POST /v1/quotes`: the bids a bid round brought (ranked; nothing reserved for them) and the declines. */
export const QuoteReply = reply({
  quoteId: opt(str),
  bids: opt(
    Type.Array(
      reply({
        provider: opt(str),
        bidId: opt(str),
        total: opt(Type.Integer(described('for the max duration, micro-tokens'))),
        price: opt(Type.String(described('the price for a person: "3600/hour", "500 per result"'))),
        pricePerHour: opt(Type.Integer(described('micro-tokens per hour, for a bid priced per hour only'))),
        earliestStart: opt(Type.Integer(described('ms since the epoch'))),
        expectedFinish: opt(Type.Integer(described('ms since the epoch'))),
        rank: opt(Type.Integer(described("1: the bid a job would take (the job's ranking)"))),
        why: opt(str),
      }),
    ),
  ),
  declines: opt(Type.Array(reply({ provider: opt(str), reasons: opt(Type.Array(str)) }))),
  released: opt(
    Type.Integer(
      described(
        'bid releases delivered right after the round, for bids that reserved anyway (older providers)',
      ),
    ),
  ),
})
export type QuoteReply = Static<typeof QuoteReply>

export const JobSummary = reply({
  id: str,
  name: opt(str),
  state: str,
  createdAt: int,
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

/** One output file: its path under /outputs, its hash and size (the provider's signed manifest). */
export const OutputFile = Type.Object({ path: str, sha256: str, size: int }, { $id: 'OutputFile' })
/** The outputs' archive (a deterministic tar), by its hash. */
export const OutputArchive = Type.Object({ sha256: str, size: int }, { $id: 'OutputArchive' })

const at = Type.Integer(described('ms since the epoch'))

/**
 * `GET /v1/jobs/:id`: the stored JobRecord (dms/orchestrator/job-record.ts) with `state`,
 * `allocation`, `usage`, `liveUsage` and `postedSpec`. Its main fields are typed; the route's
 * answer is declared with this type, so a field that changes shape fails to compile here.
 */
export const JobReply = Type.Object(
  {
    id: str,
    state: Type.String(described(`one of ${JOB_STATES.join(', ')}`)),
    spec: Type.Unsafe<JobSpec>({
      type: 'object',
      additionalProperties: true,
      description:
        'the spec as stored: sizes in bytes (`resources.memoryBytes`), `maxDurationSeconds`, defaults filled in. To post the job again, post `postedSpec`',
    }),
    postedSpec: jobSpecSchema,
    createdAt: at,
    rerunOf: opt(str),
    history: Type.Array(Type.Object({ state: str, at })),
    error: opt(
      Type.Object({
        code: Type.String(described('NO_BIDS, QUEUE_TIMEOUT, ... (specs/state-machines.md)')),
        message: str,
        declines: opt(Type.Array(Type.Object({ provider: str, reasons: Type.Array(str) }))),
      }),
    ),
    winner: opt(Type.Object({ bidId: str, provider: str, why: str })),
    allocationId: opt(str),
    result: opt(
      Type.Object({
        jobId: str,
        receipt: Type.Unsafe<SignedReceipt>({
          type: 'object',
          additionalProperties: true,
          description: "the provider's signed receipt",
        }),
        stdout: str,
        stderr: str,
        truncated: Type.Boolean(),
        outputs: Type.Array(OutputFile),
        archive: opt(OutputArchive),
        members: opt(
          Type.Array(
            Type.Object({
              name: str,
              status: StringEnum(['completed', 'failed', 'timed_out', 'cancelled']),
              exitCode: int,
              reason: opt(str),
              stdout: str,
              stderr: str,
              truncated: Type.Boolean(),
            }),
          ),
        ),
      }),
    ),
    settlement: opt(
      Type.Unsafe<Settlement>({
        type: 'object',
        additionalProperties: true,
        description:
          '{ contractId, outcome, paidToProvider, refundedToRequester, ... }, signed by the contract-db',
      }),
    ),
    allocation: Type.Union([
      Type.Object({ id: str, provider: opt(str), state: Type.Union([str, Type.Null()]) }),
      Type.Null(),
    ]),
    usage: Type.Union([
      Type.Unsafe<Usage>({
        type: 'object',
        additionalProperties: true,
        description: "the signed receipt's usage ({ wallSeconds, ... })",
      }),
      Type.Null(),
    ]),
    liveUsage: Type.Union([
      Type.Unsafe<LiveUsage & { at: number }>({
        type: 'object',
        additionalProperties: true,
        description: "{ cpuSeconds, memoryBytes, logBytes, wallSeconds, at }: the provider's last heartbeat",
      }),
      Type.Null(),
    ]),
  },
  {
    $id: 'Job',
    description:
      'the stored job; fields not listed here (bids, contract, proof, updates, ...) are in specs/rest-api.md',
  },
)
export type JobReply = Static<typeof JobReply>
