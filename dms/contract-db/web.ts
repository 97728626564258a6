/**
 * The contract-db operator's dashboard (specs/dashboard.md, "The contract-db's page"): a loopback
 * TCP listener that serves the page, one overview of the books and an event stream of the
 * service's own change feed. Nothing but a signed-in browser reads it: the session comes from a
 * one-time link that `dms contract-db dashboard` asks the operator socket for. It is built from
 * small ports, never from the node; sign-in, headers and page routes are dms/web/'s.
 */
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { guardWrites } from '../web/csrf.js'
import { isPage, isPublic, loginPage, pageRoutes, securityHeaders, webError } from '../web/pages.js'
import { operatorFirstPaint } from './first-paint.js'
import { cookieNameFor, DashboardSessions } from '../web/sessions.js'
import type { Conservation } from './conservation.js'
import { summarize, type ContractSummary, type OperatorPorts } from './operator-api.js'
import type { Account, ApprovedEntity } from './records.js'
import type { BooksChange } from './service.js'

/** Event streams open at once. */
export const MAX_BOOK_STREAMS = 8
/** The newest contracts the overview lists (the counts cover them all). */
export const OVERVIEW_CONTRACTS = 200
const KEEPALIVE_MS = 20_000

export interface BooksPorts extends Pick<OperatorPorts, 'approvals' | 'accounts' | 'contracts' | 'identity'> {
  conservation(): Promise<Conservation>
  onChange(fn: (what: BooksChange) => void): () => void
  log: Logger
}

/** `GET /v1/contract-db/overview`: everything the page shows, read at once. */
export interface Overview {
  peerId: string
  approved: ApprovedEntity[]
  accounts: Account[]
  /** Contracts per stored state. */
  byState: Record<string, number>
  /** The newest OVERVIEW_CONTRACTS, newest first. */
  contracts: ContractSummary[]
  conservation: Conservation
}

export interface OperatorWebInit {
  /** Loopback only. @default '127.0.0.1' */
  host?: '127.0.0.1' | '::1'
  /** 0 picks a free port. */
  port: number
  /** Where the built page lies (tests). */
  dir?: string
  max?: number
}

export class OperatorWeb {
  readonly sessions: DashboardSessions
  private app?: FastifyInstance
  /** `host:port` once listening. */
  address?: string

  constructor(
    private readonly ports: BooksPorts,
    private readonly init: OperatorWebInit,
  ) {
    this.sessions = new DashboardSessions(undefined, () => cookieNameFor(this.address))
  }

  /** `http://host:port`, once listening. */
  get origin(): string | undefined {
    return this.address === undefined ? undefined : `http://${this.address}`
  }

  async start(): Promise<void> {
    if (this.app !== undefined) return
    const app = Fastify({ logger: false, bodyLimit: 1024 })
    this.routes(app)
    await app.listen({ host: this.init.host ?? '127.0.0.1', port: this.init.port })
    const a = app.server.address() as AddressInfo
    this.address = `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`
    this.app = app
  }

  async stop(): Promise<void> {
    await this.app?.close()
    this.app = undefined
  }

  /** Reads the books for the page. */
  async overview(): Promise<Overview> {
    const { approvals, accounts, contracts, identity } = this.ports
    const conservation = await this.ports.conservation()
    const { contracts: newest } = await contracts.page({ limit: OVERVIEW_CONTRACTS })
    return {
      peerId: identity.peerId(),
      approved: await approvals.list(),
      accounts: await accounts.list(),
      byState: await contracts.counts(),
      contracts: newest.map(summarize),
      conservation,
    }
  }

  private routes(app: FastifyInstance): void {
    const command = 'dms contract-db dashboard'
    securityHeaders(app)
    // A live session, or nothing: the login page for the page, 401 for data.
    app.addHook('onRequest', async (req, rep) => {
      if (this.sessions.valid(req.headers.cookie) || isPublic(req.url)) return
      if (isPage(req.url)) return loginPage(rep, 401, undefined, command)
      return rep.status(401).send(webError('UNAUTHORIZED', `sign in first: run '${command}'`))
    })
    // No bearer token here: every write (sign-out) needs the page's write token.
    guardWrites(app, { sessions: this.sessions, origin: () => this.origin })
    app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, _req, rep) => {
      const status = err.statusCode ?? 500
      if (status >= 500) this.ports.log.error({ err }, 'dashboard error')
      return rep.status(status).send(webError(err.code ?? 'INTERNAL', err.message))
    })
    app.setNotFoundHandler((req, rep) =>
      rep.status(404).send(webError('NOT_FOUND', `no route ${req.method} ${req.url}`)),
    )
    pageRoutes(app, {
      sessions: this.sessions,
      page: 'operator.html',
      assets: ['operator.js', 'app.css'],
      command,
      dir: this.init.dir,
      firstPaint: async () => operatorFirstPaint(await this.overview(), Date.now()),
    })
    app.get('/v1/contract-db/overview', () => this.overview())
    this.events(app)
  }

  /** `GET /v1/events`: a `books` event ({ what }) after each write of the service. */
  private events(app: FastifyInstance): void {
    const max = this.init.max ?? MAX_BOOK_STREAMS
    const streams = new Set<{ end: () => void }>()
    app.addHook('preClose', (done) => {
      for (const s of streams) s.end()
      done()
    })
    app.get('/v1/events', async (req, rep) => {
      if (streams.size >= max)
        return rep
          .status(503)
          .send(webError('TOO_MANY_STREAMS', `${max} event streams are open already: close one first`))
      const headers = rep.getHeaders() as Record<string, string>
      rep.hijack()
      const res = rep.raw
      res.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      })
      res.write(': dms contract-db events\n\n')
      const off = this.ports.onChange((what) =>
        res.write(`event: books\ndata: ${JSON.stringify({ what })}\n\n`),
      )
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS).unref()
      const stream = { end: () => res.end() }
      streams.add(stream)
      req.raw.once('close', () => {
        streams.delete(stream)
        clearInterval(keepalive)
        off()
      })
    })
  }
}
