/**
 * The node's REST API (specs/rest-api.md): a Fastify instance built from ports (dms/api/ports.ts),
 * served on a unix socket (mode 0600) and optionally on loopback TCP with a bearer token.
 */
import { randomBytes } from 'node:crypto'
import { chmod, readFile, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { Ajv } from 'ajv'
import { validatorOnUse } from '../schema.js'
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify'
import type { Logger } from 'pino'
import { claimSocket, markOwned, releaseSocket } from '../../actors/local-socket.js'
import { guardWrites } from '../web/csrf.js'
import { isPage, isPublic, loginPage, securityHeaders } from '../web/pages.js'
import { bearerMatches, cookieNameFor, DashboardSessions } from '../web/sessions.js'
import { authorised, dashboardRoutes } from './dashboard-routes.js'
import { dataRoutes } from './data-routes.js'
import { eventsRoutes } from './events-routes.js'
import { firstPaint } from './first-paint.js'
import { apiError, STATUS, validationError } from './errors.js'
import { jobRoutes } from './job-routes.js'
import { modeRoutes } from './mode-routes.js'
import { topicRoutes } from './topic-routes.js'
import { workflowRoutes } from './workflow-routes.js'
import { nodeRoutes } from './node-routes.js'
import { DMS_VERSION, openApiDocument, recordRoutes } from './openapi.js'
import type { ApiPorts } from './ports.js'
import { functionRoutes } from './function-routes.js'
import { queueRoutes } from './queue-routes.js'
import { resourceRoutes } from './resources-routes.js'

export interface ApiServerInit {
  /** Unix socket path; created with mode 0600. */
  socketPath: string
  /**
   * Optional TCP listener on loopback; every request needs `authorization: Bearer <token>` or a
   * dashboard session (whose writes need the page's write token).
   */
  tcp?: { host?: string; port: number; token?: string }
  /** Where a generated TCP token is kept (mode 0600) when `tcp.token` is not given. */
  tokenPath?: string
}

/**
 * Builds the API's Fastify instance with every route (no listener). `openapi()` gives the
 * document generated from the routes' schemas. Used by the server and scripts/gen-openapi.ts.
 */
export function buildApi(
  ports: ApiPorts,
  c: { log: Logger },
  opts: {
    token?: string
    /** Shared by the socket's and the TCP listener's instances: a code minted on one signs in on the other. */
    sessions?: DashboardSessions
    /** `http://host:port` of the TCP listener (the dashboard's address). */
    origin?: () => string | undefined
    /** Where the built dashboard lies (default: this package's `dist/dashboard/`). */
    dashboardDir?: string
  } = {},
): { app: FastifyInstance; openapi: () => object } {
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
  // Each route's check is compiled at its first request, not at start (dms/schema.ts).
  app.setValidatorCompiler(({ schema, httpPart }) =>
    validatorOnUse(httpPart === 'body' ? strict : text, schema),
  )

  const dashboard = {
    sessions: opts.sessions ?? new DashboardSessions(),
    token: opts.token,
    origin: opts.origin ?? (() => undefined),
    dir: opts.dashboardDir,
    firstPaint: () => firstPaint(ports, Date.now()),
  }
  securityHeaders(app)
  if (opts.token !== undefined) {
    // A bearer token, or the dashboard's session cookie (specs/dashboard.md, "Sign-in").
    app.addHook('onRequest', async (req, reply) => {
      if (authorised(req, dashboard) || isPublic(req.url)) return
      if (isPage(req.url)) return loginPage(reply, 401)
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
    // A browser's writes need the page's write token too (specs/dashboard.md, "Writes from the page").
    const token = opts.token
    guardWrites(app, {
      sessions: dashboard.sessions,
      origin: dashboard.origin,
      bearer: (req) => bearerMatches(req.headers.authorization, token),
    })
  }

  app.setErrorHandler((err: FastifyError, _req, reply) => {
    const invalid = validationError(err)
    if (invalid !== undefined) return reply.status(400).send(invalid)
    const code = typeof err.code === 'string' && err.code.length > 0 ? err.code : undefined
    const status = err.statusCode ?? (code !== undefined ? STATUS[code] : undefined) ?? 500
    if (status >= 500) c.log.error({ err }, 'api error')
    const field = (err as { field?: unknown }).field
    return reply
      .status(status)
      .send(
        apiError(
          code ?? (status >= 500 ? 'INTERNAL' : 'BAD_REQUEST'),
          err.message,
          typeof field === 'string' ? field : undefined,
        ),
      )
  })
  app.setNotFoundHandler((req, reply) => {
    void reply.status(404).send(apiError('NOT_FOUND', `no route ${req.method} ${req.url}`))
  })

  void app.register(resourceRoutes, { resources: ports.resources })
  void app.register(nodeRoutes, { ...ports, openapi })
  void app.register(dataRoutes, { blobs: ports.blobs, jobs: ports.jobs })
  void app.register(jobRoutes, { jobs: ports.jobs })
  void app.register(queueRoutes, { queues: ports.queues })
  void app.register(modeRoutes, { mode: ports.mode })
  void app.register(topicRoutes, { topics: ports.topics })
  void app.register(workflowRoutes, { workflows: ports.workflows })
  void app.register(functionRoutes, { functions: ports.functions })
  void app.register(dashboardRoutes, dashboard)
  void app.register(eventsRoutes, {
    jobs: ports.jobs,
    allocations: ports.allocations,
    peers: ports.peers,
    workflows: ports.workflows,
  })
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
    private readonly c: { ports: ApiPorts; log: Logger },
    private readonly init: ApiServerInit,
  ) {}

  get socketPath(): string {
    return this.init.socketPath
  }

  async start(): Promise<void> {
    if (this.app !== undefined) return
    const sessions = new DashboardSessions(undefined, () => cookieNameFor(this.tcpAddress))
    const origin = () => (this.tcpAddress === undefined ? undefined : `http://${this.tcpAddress}`)
    const { app } = buildApi(this.c.ports, this.c, { sessions, origin })
    await claimSocket(this.init.socketPath)
    await app.listen({ path: this.init.socketPath })
    await chmod(this.init.socketPath, 0o600)
    await markOwned(this.init.socketPath)
    this.app = app
    const tcp = this.init.tcp
    if (tcp !== undefined) {
      const token = await apiToken(this.init.tokenPath ?? `${this.init.socketPath}.token`, tcp.token)
      const t = buildApi(this.c.ports, this.c, { token, sessions, origin }).app
      await t.listen({ host: tcp.host ?? '127.0.0.1', port: tcp.port })
      const a = t.server.address() as AddressInfo
      this.tcpAddress = `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`
      this.tcpApp = t
    }
  }

  async stop(): Promise<void> {
    await this.tcpApp?.close()
    this.tcpApp = undefined
    if (this.app !== undefined) await releaseSocket(this.init.socketPath)
    await this.app?.close()
    this.app = undefined
  }
}
