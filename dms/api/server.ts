import { randomBytes, timingSafeEqual } from 'node:crypto'
import { chmod, readFile, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { Ajv } from 'ajv'
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify'
import type { Logger } from 'pino'
import { DmsError } from '../../actors/errors.js'
import { InvalidJobSpecError, parseJobSpec } from '../orchestrator/job-spec.js'
import type { DmsNode } from '../node.js'
import { JobEndedError, JobNotFoundError } from '../orchestrator/orchestrator.js'
import { dataRoutes } from './data-routes.js'
import { nodeRoutes } from './node-routes.js'
import { DMS_VERSION, openApiDocument, recordRoutes } from './openapi.js'
import { resourceRoutes } from './resources-routes.js'

export interface ApiServerInit {
  /** Unix socket path; created with mode 0600. */
  socketPath: string
  /** Optional TCP listener on loopback; every request needs `authorization: Bearer <token>`. */
  tcp?: { host?: string; port: number; token?: string }
  /** Where a generated TCP token is kept (mode 0600) when `tcp.token` is not given. */
  tokenPath?: string
}

/** JSON error body: a stable code and a message a person can act on. */
export interface ApiError {
  error: { code: string; message: string; field?: string }
}

export const apiError = (code: string, message: string, field?: string): ApiError => ({
  error: { code, message, field },
})

/** HTTP status of error codes thrown without a `statusCode`. */
const STATUS: Record<string, number> = {
  JOB_NOT_FOUND: 404,
  JOB_ENDED: 409,
  NOT_A_REQUESTER: 409,
  NOT_A_PROVIDER: 409,
}

/** An error a route throws: the code is stable, the status is HTTP. */
export class RouteError extends DmsError {
  constructor(
    readonly statusCode: number,
    code: string,
    message: string,
  ) {
    super(code, message)
  }
}

const jobIdParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 100 } },
} as const

const jobSummarySchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    state: { type: 'string' },
    createdAt: { type: 'integer' },
    provider: { type: 'string' },
  },
} as const

/**
 * Builds the API's Fastify instance with every route (no listener). `openapi()` gives the
 * document generated from the routes' schemas. Used by the server and scripts/gen-openapi.ts.
 */
export function buildApi(
  c: { node: DmsNode; log: Logger },
  opts: { token?: string } = {},
): { app: FastifyInstance; openapi: () => object } {
  const { node } = c
  const app = Fastify({
    logger: false,
    bodyLimit: 8 * 1024 * 1024,
    // Errors the router raises before any route (a bad URL, a too-long param) keep the JSON shape.
    frameworkErrors: (err, _req, reply) => {
      const status = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : (err.statusCode ?? 400)
      void (reply as FastifyReply).status(status).send(apiError(err.code, err.message))
    },
  })
  const recorded = recordRoutes(app)
  const openapi = () => openApiDocument(recorded(), DMS_VERSION)
  // Strict request schemas: unknown fields are refused, nothing is dropped. Bodies are JSON and
  // never coerced; params and query strings are text, so `?follow=true` may be declared boolean.
  const strict = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true })
  const text = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true, coerceTypes: true })
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : text).compile(schema))

  if (opts.token !== undefined) {
    const expected = Buffer.from(`Bearer ${opts.token}`)
    app.addHook('onRequest', async (req, reply) => {
      const got = Buffer.from(req.headers.authorization ?? '')
      if (got.length !== expected.length || !timingSafeEqual(got, expected))
        return reply
          .status(401)
          .header('www-authenticate', 'Bearer')
          .send(
            apiError(
              'UNAUTHORIZED',
              'this listener needs "authorization: Bearer <token>" (see <dataDir>/api-token)',
            ),
          )
    })
  }

  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err.validation !== undefined) {
      const first = err.validation[0]
      const field = `${err.validationContext ?? 'body'}${first?.instancePath ?? ''}`
      const detail =
        first?.keyword === 'additionalProperties'
          ? `unknown field "${String((first.params as { additionalProperty?: string }).additionalProperty)}"`
          : (first?.message ?? err.message)
      return reply.status(400).send(apiError('INVALID_REQUEST', `${field}: ${detail}`, field))
    }
    const code = typeof err.code === 'string' && err.code.length > 0 ? err.code : undefined
    const status = err.statusCode ?? (code !== undefined ? STATUS[code] : undefined) ?? 500
    if (status >= 500) c.log.error({ err }, 'api error')
    return reply
      .status(status)
      .send(apiError(code ?? (status >= 500 ? 'INTERNAL' : 'BAD_REQUEST'), err.message))
  })
  app.setNotFoundHandler((req, reply) => {
    void reply.status(404).send(apiError('NOT_FOUND', `no route ${req.method} ${req.url}`))
  })

  void app.register(resourceRoutes, { onboarding: () => node.onboarding })
  void app.register(nodeRoutes, { node: () => node, openapi })
  void app.register(dataRoutes, { blobs: () => node.blobs, orchestrator: () => node.orchestrator })

  const requester = () => {
    if (node.orchestrator === undefined)
      throw new RouteError(
        409,
        'NOT_A_REQUESTER',
        'this node is not a requester (no "requester" section in its config)',
      )
    return node.orchestrator
  }

  app.post(
    '/v1/jobs',
    {
      config: {
        doc: {
          summary: 'post a job',
          body: { type: 'object', description: 'a job spec (specs/job-spec.md)' },
          description:
            'The body is a job spec (specs/job-spec.md), checked by parseJobSpec: a refusal is 400 INVALID_JOB_SPEC with `field`.',
          responses: {
            201: {
              description: 'stored; its journey has started',
              schema: {
                type: 'object',
                properties: { id: { type: 'string' }, state: { type: 'string' } },
              },
            },
          },
        },
      },
    },
    async (req, reply) => {
      const orch = requester()
      let job
      try {
        // post() refuses an input naming a blob this node does not have, like a bad field.
        job = await orch.post(parseJobSpec(req.body))
      } catch (err) {
        if (err instanceof InvalidJobSpecError)
          return reply.status(400).send(apiError(err.code, err.message, err.field))
        throw err
      }
      return reply.status(201).send({ id: job.record.id, state: job.state })
    },
  )

  app.get(
    '/v1/jobs',
    {
      config: {
        doc: {
          summary: "list this requester's jobs, newest first",
          responses: {
            200: {
              description: 'the jobs',
              schema: { type: 'object', properties: { jobs: { type: 'array', items: jobSummarySchema } } },
            },
          },
        },
      },
    },
    async () => {
      const jobs = await requester().list()
      return {
        jobs: jobs
          .sort((a, b) => b.record.createdAt - a.record.createdAt)
          .map((j) => ({
            id: j.record.id,
            name: j.record.spec.name,
            state: j.state,
            createdAt: j.record.createdAt,
            provider: j.record.winner?.provider,
          })),
      }
    },
  )

  app.get<{ Params: { id: string } }>(
    '/v1/jobs/:id',
    {
      schema: { params: jobIdParams },
      config: {
        doc: {
          summary: 'one job: state, history, bids, contract, allocation, usage, result, settlement',
          description:
            'The stored JobRecord (dms/orchestrator/job-record.ts) with `state`, plus `allocation` (id, provider, last update) and `usage` (from the signed receipt) once known.',
          responses: {
            200: { description: 'the job', schema: { type: 'object' } },
            404: { description: 'JOB_NOT_FOUND' },
          },
        },
      },
    },
    async (req, reply) => {
      const job = await requester().get(req.params.id)
      if (job === undefined)
        return reply.status(404).send(apiError('JOB_NOT_FOUND', `no job ${req.params.id}`))
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
      }
    },
  )
  // Cancel: 202 once the job machine took the cancel; the job then ends `cancelled`.
  app.delete<{ Params: { id: string } }>(
    '/v1/jobs/:id',
    {
      schema: { params: jobIdParams },
      config: {
        doc: {
          summary: 'cancel a job: the provider stops it and the contract pays the time used',
          responses: {
            202: {
              description: 'the cancel is under way',
              schema: { type: 'object', properties: { id: { type: 'string' }, state: { type: 'string' } } },
            },
            404: { description: 'JOB_NOT_FOUND' },
            409: { description: 'JOB_ENDED: the job is already in a final state' },
          },
        },
      },
    },
    async (req, reply) => {
      try {
        const job = await requester().cancel(req.params.id)
        return reply.status(202).send({ id: job.record.id, state: job.state })
      } catch (err) {
        if (err instanceof JobNotFoundError) return reply.status(404).send(apiError(err.code, err.message))
        if (err instanceof JobEndedError) return reply.status(409).send(apiError(err.code, err.message))
        throw err
      }
    },
  )
  return { app, openapi }
}

/** The TCP token: the configured one, else the one in `path`, else a new one written there (0600). */
export async function apiToken(path: string, configured?: string): Promise<string> {
  if (configured !== undefined) return configured
  try {
    const t = (await readFile(path, 'utf8')).trim()
    if (t.length >= 16) return t
  } catch {
    /* none yet */
  }
  const t = randomBytes(32).toString('hex')
  await writeFile(path, `${t}\n`, { mode: 0o600 })
  await chmod(path, 0o600)
  return t
}

/**
 * The node's REST API on a local unix socket (mode 0600), and optionally on TCP loopback with a
 * bearer token. Spec: specs/rest-api.md.
 */
export class ApiServer {
  private app?: FastifyInstance
  private tcpApp?: FastifyInstance
  /** `host:port` of the TCP listener once started. */
  tcpAddress?: string

  constructor(
    private readonly c: { node: DmsNode; log: Logger },
    private readonly init: ApiServerInit,
  ) {}

  get socketPath(): string {
    return this.init.socketPath
  }

  async start(): Promise<void> {
    if (this.app !== undefined) return
    const { app } = buildApi(this.c)
    await rm(this.init.socketPath, { force: true })
    await app.listen({ path: this.init.socketPath })
    await chmod(this.init.socketPath, 0o600)
    this.app = app
    const tcp = this.init.tcp
    if (tcp !== undefined) {
      const token = await apiToken(this.init.tokenPath ?? `${this.init.socketPath}.token`, tcp.token)
      const t = buildApi(this.c, { token }).app
      await t.listen({ host: tcp.host ?? '127.0.0.1', port: tcp.port })
      const a = t.server.address() as AddressInfo
      this.tcpAddress = `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`
      this.tcpApp = t
    }
  }

  async stop(): Promise<void> {
    await this.tcpApp?.close()
    this.tcpApp = undefined
    await this.app?.close()
    this.app = undefined
  }
}
