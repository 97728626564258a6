/** The job routes' shapes: `/v1/jobs...`, `/v1/quotes` and `/v1/blobs/:sha256` (specs/rest-api.md). */
import { Type, type Static } from '@sinclair/typebox'
import { StringEnum, strictObject } from '../../schema.js'
import { anyObject, described, flag, int, opt, reply, str } from './common.js'
import { queueId } from './queues.js'

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
export const JobStateReply = reply({ id: opt(str), state: opt(str) })
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

/** `GET /v1/jobs/:id`: the stored JobRecord with `state`, `allocation` and `usage`. */
export const JobReply = anyObject
