/**
 * Data-plane routes of a requester node (specs/rest-api.md, specs/data-plane.md):
 *
 *   PUT  /v1/blobs                       upload an input blob (raw body) -> { sha256, size }
 *   GET  /v1/blobs/:sha256               a blob's bytes (an uploaded input, a fetched archive)
 *   GET  /v1/jobs/:id/logs[?follow=true][&member=m] a job's output (JSON), or NDJSON live until it
 *                                        ends; a pod's member by member, or one member's
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
import { BINARY, type RouteDoc } from './openapi.js'
import { BlobParams, BlobReply, isSet, LogLine, LogsReply, LogsQuery, OutputsReply } from './schemas.js'

export interface DataRoutesOptions {
  blobs: BlobsPort
  /** The requester's jobs (the null object on a node that is not a requester: 409). */
  jobs: JobsPort
}

/** States a job does not leave. */
const FINAL = new Set(['completed', 'failed', 'cancelled'])

/** The OpenAPI description of a route (read by the API's route recorder, dms/api/openapi.ts). */
const doc = (d: RouteDoc) => ({ doc: d })

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
      config: doc({
        summary: 'upload an input blob (application/octet-stream); refer to it by sha256 in a job spec',
        rawBody: 'application/octet-stream',
        responses: {
          201: { description: 'stored', schema: BlobReply },
          408: { description: 'UPLOAD_STALLED: no bytes for api.uploadIdleMs' },
          413: { description: 'BLOB_TOO_LARGE: over 1 GiB' },
          415: { description: 'FST_ERR_CTP_INVALID_MEDIA_TYPE: not application/octet-stream' },
          503: { description: 'UPLOADS_BUSY: uploads in progress hold api.uploadsMaxBytes' },
        },
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
        const body = req.body as AsyncIterable<Uint8Array>
        return await reply
          .status(201)
          .send(await blobs.put(body, Number.isSafeInteger(declared) && declared > 0 ? declared : undefined))
      } catch (err) {
        // A stalled or refused upload's client may still be sending (or never will): closed.
        if (isCode(err, 'UPLOAD_STALLED') || isCode(err, 'UPLOADS_BUSY'))
          void reply.header('connection', 'close')
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
      config: doc({
        summary: "a blob's bytes, by its sha256 (64 lowercase hex)",
        responses: {
          200: { description: 'its bytes', contentType: 'application/octet-stream', schema: BINARY },
          400: { description: 'INVALID_REQUEST: params/sha256 is not a sha256' },
          404: { description: 'BLOB_NOT_FOUND' },
        },
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
      config: doc({
        summary:
          "a job's stdout and stderr; with follow=true an NDJSON stream of live output ending with the job's state",
        role: 'requester',
        responses: {
          200: {
            description:
              "without follow: the output so far, as JSON (a pod's member by member); with follow=true: application/x-ndjson, each line a LogLine (the schema given) ({ stream, data, member? }, then { end: true, state })",
            schema: LogsReply,
            alsoAs: { 'application/x-ndjson': LogLine },
          },
          400: { description: 'INVALID_REQUEST: member given for a job that is not a pod' },
          404: { description: 'JOB_NOT_FOUND; MEMBER_NOT_FOUND: the pod has no such member' },
        },
      }),
    },
    async (req, reply) => {
      const id = req.params.id
      const member = req.query.member
      if (!isSet(req.query.follow)) return logsOf(jobs, checkMember(await jobOf(id), member), member)
      // Subscribe first, then read: nothing that arrives in between is lost.
      const out = new PassThrough()
      const line = (v: unknown) => out.write(`${JSON.stringify(v)}\n`)
      const offLog = jobs.onLog((jobId, l: JobLog) => {
        if (jobId !== id || (member !== undefined && l.member !== member)) return
        line({ stream: l.stream, data: l.data, ...(l.member !== undefined ? { member: l.member } : {}) })
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
        job = checkMember(await jobOf(id), member)
      } catch (err) {
        offLog()
        offChange()
        throw err
      }
      const sofar = logsOf(jobs, job, member)
      for (const part of sofar.members ?? [{ ...sofar, name: member }]) {
        const of = part.name !== undefined ? { member: part.name } : {}
        if (part.stdout !== '') line({ stream: 'stdout', data: part.stdout, ...of })
        if (part.stderr !== '') line({ stream: 'stderr', data: part.stderr, ...of })
      }
      if (FINAL.has(job.state)) end(job.state)
      return reply.type('application/x-ndjson').send(out)
    },
  )

  app.get<{ Params: { id: string } }>(
    '/v1/jobs/:id/outputs',
    {
      config: doc({
        summary: "the outputs' manifest and archive id",
        role: 'requester',
        responses: {
          200: { description: 'the manifest (empty until the result came)', schema: OutputsReply },
          404: { description: 'JOB_NOT_FOUND' },
        },
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
      config: doc({
        summary: 'the outputs as one tar (as fetched and checked)',
        role: 'requester',
        responses: {
          200: { description: 'the archive', contentType: 'application/x-tar', schema: BINARY },
          404: { description: 'JOB_NOT_FOUND; OUTPUTS_NOT_AVAILABLE: no fetched archive' },
        },
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
    {
      config: doc({
        summary: "one output file, by its path in the outputs' manifest (e.g. sub/answer.txt)",
        role: 'requester',
        responses: {
          200: { description: "the file's bytes", contentType: 'application/octet-stream', schema: BINARY },
          404: { description: 'JOB_NOT_FOUND; OUTPUT_NOT_FOUND' },
        },
      }),
    },
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

/**
 * A job's output: the result's once it came, else the live output so far. A pod's is listed member
 * by member, or with `member` that member's alone.
 */
function logsOf(jobs: JobsPort, job: JobView, member?: string): JobLogs {
  const names = job.record.spec.members?.map((m) => m.name)
  if (names !== undefined && member === undefined) {
    const members = names.map((name) => ({ name, ...logsOf(jobs, job, name) }))
    return { stdout: '', stderr: '', truncated: members.some((m) => m.truncated), members }
  }
  const r = job.record.result
  if (r !== undefined) {
    if (member === undefined) return { stdout: r.stdout, stderr: r.stderr, truncated: r.truncated }
    const m = r.members?.find((x) => x.name === member)
    return { stdout: m?.stdout ?? '', stderr: m?.stderr ?? '', truncated: m?.truncated ?? false }
  }
  return jobs.liveLogs(job.record.id, member) ?? { stdout: '', stderr: '', truncated: false }
}

/** The job, once `member` (if given) is one of its pod's members: 400 for a job that is no pod, 404 for a name it lacks. */
function checkMember(job: JobView, member: string | undefined): JobView {
  if (member === undefined) return job
  const names = job.record.spec.members?.map((m) => m.name)
  if (names === undefined)
    throw new RouteError(400, 'INVALID_REQUEST', `member: job ${job.record.id} is not a pod`)
  if (!names.includes(member))
    throw new RouteError(
      404,
      'MEMBER_NOT_FOUND',
      `job ${job.record.id} has no member ${member} (${names.join(', ')})`,
    )
  return job
}
