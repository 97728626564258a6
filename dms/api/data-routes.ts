/**
 * Data-plane routes of a requester node (specs/rest-api.md, specs/data-plane.md):
 *
 *   PUT  /v1/blobs                       upload an input blob (raw body) -> { sha256, size }
 *   GET  /v1/jobs/:id/logs[?follow=true] a job's output (JSON), or NDJSON live until it ends
 *   GET  /v1/jobs/:id/outputs            the outputs' manifest and archive id
 *   GET  /v1/jobs/:id/outputs.tar        the archive (deterministic tar)
 *   GET  /v1/jobs/:id/outputs/<path>     one output file's bytes
 */
import { createReadStream } from 'node:fs'
import { PassThrough } from 'node:stream'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { BlobService } from '../blobs/service.js'
import { BlobTooLargeError, MAX_BLOB_BYTES } from '../blobs/store.js'
import type { JobLog } from '../protocol/messages.js'
import { locateOutputFile } from '../orchestrator/data-plane.js'
import type { Orchestrator, StoredJob } from '../orchestrator/orchestrator.js'

export interface DataRoutesOptions {
  blobs: () => BlobService
  /** The node's orchestrator; undefined when the node is not a requester. */
  orchestrator: () => Orchestrator | undefined
}

/** States a job does not leave. */
const FINAL = new Set(['completed', 'failed', 'cancelled'])

/** The OpenAPI description of a route (read by the API's route recorder, dms/api/openapi.ts). */
const doc = (summary: string, responses: Record<number, { description: string }>) => ({
  doc: { summary, responses },
})

const httpError = (statusCode: number, code: string, message: string) =>
  Object.assign(new Error(message), { statusCode, code })

const tooLarge = (size: number, limit: number) =>
  httpError(
    413,
    'BLOB_TOO_LARGE',
    `blob of ${size} bytes (or more) is over this node's limit of ${limit} bytes: split it into several inputs`,
  )

export const dataRoutes: FastifyPluginAsync<DataRoutesOptions> = (app: FastifyInstance, opts) => {
  // Uploads arrive as a raw stream; the blob store hashes them as they are written.
  app.addContentTypeParser('application/octet-stream', (_req, payload, done) => done(null, payload))

  const orchestrator = (): Orchestrator => {
    const o = opts.orchestrator()
    if (o === undefined) {
      throw httpError(
        409,
        'NOT_A_REQUESTER',
        'this node is not a requester (no "requester" section in its config)',
      )
    }
    return o
  }
  const jobOf = async (id: string): Promise<StoredJob> => {
    const job = await orchestrator().get(id)
    if (job === undefined) throw httpError(404, 'JOB_NOT_FOUND', `no job ${id}`)
    return job
  }

  app.put(
    '/v1/blobs',
    {
      bodyLimit: MAX_BLOB_BYTES,
      config: doc('upload an input blob (application/octet-stream); refer to it by sha256 in a job spec', {
        201: { description: '{ sha256, size }' },
        413: { description: 'over 1 GiB' },
      }),
    },
    async (req, reply) => {
      if (typeof (req.body as AsyncIterable<Uint8Array> | undefined)?.[Symbol.asyncIterator] !== 'function') {
        throw httpError(415, 'FST_ERR_CTP_INVALID_MEDIA_TYPE', 'send the blob as application/octet-stream')
      }
      const store = opts.blobs().store
      // The body is a raw stream (Fastify's bodyLimit does not apply to it): a declared size over
      // the limit is refused before a byte is read; an undeclared one is cut at the limit.
      // The connection is closed after a 413, so the client cannot go on sending the rest.
      const declared = Number(req.headers['content-length'] ?? 0)
      if (declared > store.maxBlobBytes) {
        void reply.header('connection', 'close')
        throw tooLarge(declared, store.maxBlobBytes)
      }
      try {
        return await reply.status(201).send(await store.putStream(req.body as AsyncIterable<Uint8Array>))
      } catch (err) {
        if (!(err instanceof BlobTooLargeError)) throw err
        void reply.header('connection', 'close')
        throw tooLarge(err.size, err.limit)
      }
    },
  )

  app.get<{ Params: { id: string }; Querystring: { follow?: string } }>(
    '/v1/jobs/:id/logs',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { follow: { type: 'string', enum: ['true', 'false', '1', '0'] } },
        },
      },
      config: doc(
        "a job's stdout and stderr; with follow=true an NDJSON stream of live output ending with the job's state",
        {
          200: { description: '{ stdout, stderr, truncated }, or application/x-ndjson lines' },
          404: { description: 'JOB_NOT_FOUND' },
        },
      ),
    },
    async (req, reply) => {
      const orch = orchestrator()
      const id = req.params.id
      const follow = req.query.follow === 'true' || req.query.follow === '1'
      if (!follow) return logsOf(orch, await jobOf(id))
      // Subscribe first, then read: nothing that arrives in between is lost.
      const out = new PassThrough()
      const line = (v: unknown) => out.write(`${JSON.stringify(v)}\n`)
      const offLog = orch.onLog((jobId, l: JobLog) => {
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
      const offChange = orch.onChange((j) => {
        if (j.record.id === id && FINAL.has(j.state)) end(j.state)
      })
      req.raw.once('close', () => {
        offLog()
        offChange()
      })
      let job: StoredJob
      try {
        job = await jobOf(id)
      } catch (err) {
        offLog()
        offChange()
        throw err
      }
      const sofar = logsOf(orch, job)
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
      if (archive === undefined || !(await opts.blobs().store.has(archive.sha256))) {
        throw httpError(404, 'OUTPUTS_NOT_AVAILABLE', `job ${req.params.id} has no fetched output archive`)
      }
      // Streamed from disk: the archive is never held in memory.
      const { size, stream } = await opts.blobs().store.stream(archive.sha256)
      return reply.type('application/x-tar').header('content-length', size).send(stream)
    },
  )

  app.get<{ Params: { id: string; '*': string } }>(
    '/v1/jobs/:id/outputs/*',
    { config: doc('one output file, by its path', { 404: { description: 'OUTPUT_NOT_FOUND' } }) },
    async (req, reply) => {
      const { record } = await jobOf(req.params.id)
      const path = req.params['*']
      const where =
        record.result === undefined ? undefined : await locateOutputFile(opts.blobs(), record.result, path)
      if (where === undefined) {
        throw httpError(
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
function logsOf(orch: Orchestrator, job: StoredJob): { stdout: string; stderr: string; truncated: boolean } {
  const r = job.record.result
  if (r !== undefined) return { stdout: r.stdout, stderr: r.stderr, truncated: r.truncated }
  return orch.liveLogs(job.record.id) ?? { stdout: '', stderr: '', truncated: false }
}
