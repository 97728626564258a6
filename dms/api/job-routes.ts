/**
 * The requester's job routes: `POST /v1/jobs`, `GET /v1/jobs`, `GET|DELETE /v1/jobs/:id`, over
 * the jobs port (on a node that is not a requester, its null object answers 409). Spec:
 * specs/rest-api.md.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { isCode } from '../../actors/errors.js'
import { jobSpecSchema } from '../orchestrator/job-spec.js'
import { postedSpecOf } from '../orchestrator/job-spec-posted.js'
import { apiError } from './errors.js'
import type { JobsPort, JobView } from './ports.js'
import {
  JobIdParams,
  JobListQuery,
  JobListReply,
  PruneBody,
  PruneReply,
  JobReply,
  JobStateReply,
  QuoteReply,
  type JobListReply as JobList,
  type JobReply as JobReplyShape,
  type JobStateReply as JobState,
} from './schemas.js'

export interface JobRoutesOptions {
  jobs: JobsPort
}

const stateOf = (job: JobView): JobState => ({ id: job.record.id, state: job.state })

/** A job's summary in `GET /v1/jobs`. */
function summary(j: JobView): NonNullable<JobList['jobs']>[number] {
  return {
    id: j.record.id,
    name: j.record.spec.name,
    state: j.state,
    createdAt: j.record.createdAt,
    provider: j.record.winner?.provider,
    queue: j.record.spec.queue,
    rerunOf: j.record.rerunOf,
    image: j.record.spec.image,
    price: priceOf(j.record),
  }
}

/** Paid to the provider once settled, else the winning bid's total (undefined before a winner). */
export function priceOf(r: JobView['record']): number | undefined {
  if (r.settlement !== undefined) return r.settlement.paidToProvider
  return r.bids.find((b) => b.bidId === r.winner?.bidId)?.total
}

/**
 * `GET /v1/jobs/:id`: the record with its state, its allocation, its usage and its spec in the form
 * `POST /v1/jobs` takes (`postedSpec`: posted as is, it runs the same job again).
 */
function detail(job: JobView): JobReplyShape {
  const r = job.record
  const last = r.updates?.[r.updates.length - 1]
  return {
    state: job.state,
    ...r,
    allocation:
      r.allocationId === undefined
        ? null
        : { id: r.allocationId, provider: r.winner?.provider, state: last?.state ?? null },
    usage: r.result?.receipt.receipt.usage ?? null,
    // While it runs: what its provider last reported (heartbeats), with when it came.
    liveUsage: job.liveUsage ?? null,
    postedSpec: postedSpecOf(r.spec),
  }
}

export const jobRoutes: FastifyPluginAsync<JobRoutesOptions> = (base: FastifyInstance, { jobs }) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/jobs',
    {
      config: {
        doc: {
          summary: 'post a job',
          role: 'requester',
          body: jobSpecSchema,
          description:
            'The body is a job spec (specs/job-spec.md), checked by parseJobSpec: a refusal is 400 INVALID_JOB_SPEC with `field`.',
          responses: {
            201: { description: 'stored; its journey has started', schema: JobStateReply },
            400: { description: 'INVALID_JOB_SPEC, with `field`' },
            404: { description: 'QUEUE_NOT_FOUND: `queue` names no queue' },
            409: { description: 'QUEUE_DRAINING, QUEUE_ENDED: `queue` takes no jobs' },
          },
        },
      },
    },
    async (req, reply) => {
      try {
        // The port checks the spec (and refuses an input naming a blob this node does not have).
        return await reply.status(201).send(stateOf(await jobs.post(req.body)))
      } catch (err) {
        if (!isCode(err, 'INVALID_JOB_SPEC')) throw err
        const e = err as Error & { code: string; field: string }
        return reply.status(400).send(apiError(e.code, e.message, e.field))
      }
    },
  )

  app.post(
    '/v1/quotes',
    {
      config: {
        doc: {
          summary: 'quote a job: one bid round without locking or contracting',
          role: 'requester',
          body: jobSpecSchema,
          description:
            'Runs one bid round for the spec (as a job would, under a fresh job id) and answers the bids that came back, ranked as a job would rank them, and the declines with their reasons. Every bid is released at once; nothing is stored. A refused spec is 400 INVALID_JOB_SPEC with `field`.',
          responses: {
            200: { description: 'the bids and declines', schema: QuoteReply },
            400: { description: 'INVALID_JOB_SPEC, with `field`' },
          },
        },
      },
    },
    async (req, reply) => {
      try {
        return await reply.send(await jobs.quote(req.body))
      } catch (err) {
        if (!isCode(err, 'INVALID_JOB_SPEC')) throw err
        const e = err as Error & { code: string; field: string }
        return reply.status(400).send(apiError(e.code, e.message, e.field))
      }
    },
  )

  app.get(
    '/v1/jobs',
    {
      config: {
        doc: {
          role: 'requester',
          summary: "one page of this requester's jobs, newest first",
          description:
            'Filters: `state`, `queue`, `since` (created at or after, ms). `limit` (1..1000, default 100) jobs per page; `next` is the cursor of the page after, absent on the last. Read from indexes (specs/rest-api.md, "Listing jobs"); an unknown query field is 400 INVALID_REQUEST.',
          responses: {
            200: { description: 'the jobs', schema: JobListReply },
            400: { description: 'INVALID_REQUEST naming the query field' },
          },
        },
      },
      schema: { querystring: JobListQuery },
    },
    async (req): Promise<JobList> => {
      const q = req.query
      const page = await jobs.list({ ...q, limit: q.limit ?? 100 })
      return { jobs: page.jobs.map(summary), ...(page.next !== undefined ? { next: page.next } : {}) }
    },
  )

  app.post(
    '/v1/jobs/prune',
    {
      schema: { body: PruneBody },
      config: {
        doc: {
          role: 'requester',
          summary: 'prune ended jobs by age or count, with the blobs no stored job uses and their grants',
          description:
            'Each field defaults to the config\'s `requester.retention`; a job that is not final is never pruned (specs/queues.md, "Retention").',
          responses: {
            200: { description: 'what was pruned', schema: PruneReply },
            400: { description: 'INVALID_REQUEST: no policy given nor configured' },
          },
        },
      },
    },
    async (req) => jobs.prune(req.body ?? {}),
  )

  app.post(
    '/v1/jobs/:id/rerun',
    {
      schema: { params: JobIdParams },
      config: {
        doc: {
          role: 'requester',
          summary: 'rerun an ended job: a new job from its spec, linked by `rerunOf`',
          description: "The new job joins the old one's queue while that queue is active, else no queue.",
          responses: {
            201: { description: 'the new job, stored', schema: JobStateReply },
            404: { description: 'JOB_NOT_FOUND' },
            409: { description: 'JOB_LIVE: the job has not ended' },
          },
        },
      },
    },
    async (req, reply) => reply.status(201).send(stateOf(await jobs.rerun(req.params.id))),
  )

  app.get(
    '/v1/jobs/:id',
    {
      schema: { params: JobIdParams },
      config: {
        doc: {
          role: 'requester',
          summary: 'one job: state, history, bids, contract, allocation, usage, result, settlement',
          description:
            'The stored JobRecord (dms/orchestrator/job-record.ts) with `state`, plus `allocation` (id, provider, last update) and `usage` (from the signed receipt) once known, and `postedSpec`: the spec as POST /v1/jobs takes it (post it as is to run the job again).',
          responses: {
            200: { description: 'the job', schema: JobReply },
            404: { description: 'JOB_NOT_FOUND' },
          },
        },
      },
    },
    async (req, reply) => {
      const job = await jobs.get(req.params.id)
      if (job === undefined)
        return reply.status(404).send(apiError('JOB_NOT_FOUND', `no job ${req.params.id}`))
      return detail(job)
    },
  )

  // Cancel: 202 once the job machine took the cancel; the job then ends `cancelled`.
  app.delete(
    '/v1/jobs/:id',
    {
      schema: { params: JobIdParams },
      config: {
        doc: {
          role: 'requester',
          summary: 'cancel a job: the provider stops it and the contract pays the time used',
          responses: {
            202: { description: 'the cancel is under way', schema: JobStateReply },
            404: { description: 'JOB_NOT_FOUND' },
            409: { description: 'JOB_ENDED: the job is already in a final state' },
          },
        },
      },
    },
    // JOB_NOT_FOUND and JOB_ENDED are answered 404 and 409 by the server's error handler.
    async (req, reply) => reply.status(202).send(stateOf(await jobs.cancel(req.params.id))),
  )
  return Promise.resolve()
}
