/**
 * Data-plane routes of a requester node (specs/rest-api.md, specs/data-plane.md):
 *
 *   PUT  /v1/blobs                       upload an input blob (raw body) -> { sha256, size }
 *   GET  /v1/blobs/:sha256               a blob's bytes (an uploaded input, a fetched archive)
 *   GET  /v1/jobs/:id/logs[?follow=true] a job's output (JSON), or NDJSON live until it ends
 *   GET  /v1/jobs/:id/outputs            the outputs' manifest and archive id
 *   GET  /v1/jobs/:id/outputs.tar        the archive (deterministic tar)
 *   GET  /v1/jobs/:id/outputs/<path>     one output file's bytes
 */
import { createReadStream } from 'node:fs'
import { PassThrough } from 'node:stream'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { isCode } from '../../actors/errors.js'
import type { JobLog } from '../protocol/messages.js'
import { RouteError } from './errors.js'
import type { BlobsPort, JobLogs, JobsPort, JobView } from './ports.js'
import { BlobParams, isSet, LogsQuery } from './schemas.js'

export interface DataRoutesOptions {
  blobs: BlobsPort
  /** The requester's jobs (the null object on a node that is not a requester: 409). */
  jobs: JobsPort
}

/** States a job does not leave. */
const FINAL = new Set(['completed', 'failed', 'cancelled'])

/** The OpenAPI description of a route (read by the API's route recorder, dms/api/openapi.ts). */
const doc = (summary: string, responses: Record<number, { description: string }>) => ({
  doc: { summary, responses },
})

const tooLarge = (size: number, limit: number) =>
  new RouteError(
    413,
    'BLOB_TOO_LARGE',
    `blob of ${size} bytes (or more) is over this node's limit of ${limit} bytes: split it into several inputs`,
  )

export const dataRoutes: FastifyPluginAsync<DataRoutesOptions> = (base: FastifyInstance, opts) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { blobs, jobs } = opts
  // Uploads arrive as a raw stream; the blob store hashes them as they are written.
  app.addContentTypeParser('application/octet-stream', (_req, payload, done) => done(null, payload))

  const jobOf = async (id: string): Promise<JobView> => {
    const job = await jobs.get(id)
    if (job === undefined) throw new RouteError(404, 'JOB_NOT_FOUND', `no job ${id}`)
    return job
  }

  app.put(
    '/v1/blobs',
    {
      bodyLimit: blobs.maxBlobBytes,
      config: doc('upload an input blob (application/octet-stream); refer to it by sha256 in a job spec', {
        201: { description: '{ sha256, size }' },
        413: { description: 'over 1 GiB' },
      }),
    },
    async (req, reply) => {
      if (typeof (req.body as AsyncIterable<Uint8Array> | undefined)?.[Symbol.asyncIterator] !== 'function') {
        throw new RouteError(
          415,
          'FST_ERR_CTP_INVALID_MEDIA_TYPE',
          'send the blob as application/octet-stream',
        )
      }
      // The body is a raw stream (Fastify's bodyLimit does not apply to it): a declared size over
      // the limit is refused before a byte is read; an undeclared one is cut at the limit.
      // The connection is closed after a 413, so the client cannot go on sending the rest.
      const declared = Number(req.headers['content-length'] ?? 0)
      if (declared > blobs.maxBlobBytes) {
        void reply.header('connection', 'close')
        throw tooLarge(declared, blobs.maxBlobBytes)
      }
      try {
        return await reply.status(201).send(await blobs.put(req.body as AsyncIterable<Uint8Array>))
      } catch (err) {
        if (!isCode(err, 'BLOB_TOO_LARGE')) throw err
        const { size, limit } = err as { size: number; limit: number }
        void reply.header('connection', 'close')
        throw tooLarge(size, limit)
      }
    },
  )

  app.get<{ Params: { sha256: string } }>(
    '/v1/blobs/:sha256',
    {
      schema: { params: BlobParams },
      config: doc("a blob's bytes, by its sha256 (64 lowercase hex)", {
        200: { description: 'application/octet-stream' },
        400: { description: 'INVALID_REQUEST: params/sha256 is not a sha256' },
        404: { description: 'BLOB_NOT_FOUND' },
      }),
    },
    async (req, reply) => {
      const { sha256 } = req.params
      const bytes = await blobs.read(sha256)
      if (bytes === undefined) throw new RouteError(404, 'BLOB_NOT_FOUND', `no blob ${sha256} on this node`)
      return reply.type('application/octet-stream').header('content-length', bytes.size).send(bytes.stream)
    },
  )

  app.get<{ Params: { id: string }; Querystring: LogsQuery }>(
    '/v1/jobs/:id/logs',
    {
      schema: { querystring: LogsQuery },
      config: doc(
        "a job's stdout and stderr; with follow=true an NDJSON stream of live output ending with the job's state",
        {
          200: { description: '{ stdout, stderr, truncated }, or application/x-ndjson lines' },
          404: { description: 'JOB_NOT_FOUND' },
        },
      ),
    },
    async (req, reply) => {
      const id = req.params.id
      if (!isSet(req.query.follow)) return logsOf(jobs, await jobOf(id))
      // Subscribe first, then read: nothing that arrives in between is lost.
      const out = new PassThrough()
      const line = (v: unknown) => out.write(`${JSON.stringify(v)}\n`)
      const offLog = jobs.onLog((jobId, l: JobLog) => {
        if (jobId === id) line({ stream: l.stream, data: l.data })
      })
      let ended = false
      const end = (state: string) => {
        if (ended) return
        ended = true
        offLog()
        offChange()
        line({ end: true, state })
        out.end()
      }
      const offChange = jobs.onChange((j) => {
        if (j.record.id === id && FINAL.has(j.state)) end(j.state)
      })
      req.raw.once('close', () => {
        offLog()
        offChange()
      })
      let job: JobView
      try {
        job = await jobOf(id)
      } catch (err) {
        offLog()
        offChange()
        throw err
      }
      const sofar = logsOf(jobs, job)
      if (sofar.stdout !== '') line({ stream: 'stdout', data: sofar.stdout })
      if (sofar.stderr !== '') line({ stream: 'stderr', data: sofar.stderr })
      if (FINAL.has(job.state)) end(job.state)
      return reply.type('application/x-ndjson').send(out)
    },
  )

  app.get<{ Params: { id: string } }>(
    '/v1/jobs/:id/outputs',
    {
      config: doc("the outputs' manifest and archive id", {
        200: { description: '{ state, archive, files, verified }' },
      }),
    },
    async (req) => {
      const { record, state } = await jobOf(req.params.id)
      return {
        state,
        archive: record.result?.archive ?? null,
        files: record.result?.outputs ?? [],
        verified: record.verification?.outputsHashOk ?? null,
      }
    },
  )

  app.get<{ Params: { id: string } }>(
    '/v1/jobs/:id/outputs.tar',
    {
      config: doc('the outputs as one tar (as fetched and checked)', {
        404: { description: 'OUTPUTS_NOT_AVAILABLE' },
      }),
    },
    async (req, reply) => {
      const { record } = await jobOf(req.params.id)
      const archive = record.result?.archive
      // Streamed from disk: the archive is never held in memory.
      const bytes = archive === undefined ? undefined : await blobs.read(archive.sha256)
      if (bytes === undefined) {
        throw new RouteError(
          404,
          'OUTPUTS_NOT_AVAILABLE',
          `job ${req.params.id} has no fetched output archive`,
        )
      }
      return reply.type('application/x-tar').header('content-length', bytes.size).send(bytes.stream)
    },
  )

  app.get<{ Params: { id: string; '*': string } }>(
    '/v1/jobs/:id/outputs/*',
    { config: doc('one output file, by its path', { 404: { description: 'OUTPUT_NOT_FOUND' } }) },
    async (req, reply) => {
      const { record } = await jobOf(req.params.id)
      const path = req.params['*']
      const where = record.result === undefined ? undefined : await blobs.outputFile(record.result, path)
      if (where === undefined) {
        throw new RouteError(
          404,
          'OUTPUT_NOT_FOUND',
          `job ${req.params.id} has no fetched output ${JSON.stringify(path)}`,
        )
      }
      // The file's bytes, streamed from their place in the archive.
      const body =
        where.size === 0
          ? Buffer.alloc(0)
          : createReadStream(where.file, { start: where.offset, end: where.offset + where.size - 1 })
      return reply.type('application/octet-stream').header('content-length', where.size).send(body)
    },
  )
  return Promise.resolve()
}

/** A job's output so far: live while it runs here, then the copy in its result. */
function logsOf(jobs: JobsPort, job: JobView): JobLogs {
  const r = job.record.result
  if (r !== undefined) return { stdout: r.stdout, stderr: r.stderr, truncated: r.truncated }
  return jobs.liveLogs(job.record.id) ?? { stdout: '', stderr: '', truncated: false }
}
