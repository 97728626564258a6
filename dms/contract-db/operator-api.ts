/**
 * The contract-db operator's REST API on a local unix socket (mode 0600): approvals, credits,
 * balances, contracts. Spec: specs/contract-db.md ("Operator API"). Credits exist only here,
 * never on the network. It is built from small ports, never from the node.
 */
import { chmod } from 'node:fs/promises'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { RefusedError } from '../../actors/errors.js'
import { claimSocket, markOwned, releaseSocket } from '../../actors/local-socket.js'
import { InvalidAmountError, type Amount } from '../contracts/money.js'
import { termsMaxDuration } from '../contracts/terms.js'
import { priceView } from '../pricing/price.js'
import { priceOf } from '../pricing/terms.js'
import type { Account, ApprovedEntity, ContractRecord, StoredState } from './records.js'
import {
  cursorIn,
  cursorText,
  limitIn,
  stateIn,
  type ContractPageOf,
  type ContractPageQuery,
} from './store/page.js'
import type { StoreBackend } from './store/port.js'

export interface ApprovalsPort {
  list(): Promise<ApprovedEntity[]>
  /** `roles`: what the peer may do (BAD_ROLE for an unknown one); none: requester and provider. */
  approve(peer: string, roles?: readonly string[]): Promise<ApprovedEntity>
  revoke(peer: string): Promise<boolean>
}

export interface AccountsPort {
  list(): Promise<Account[]>
  get(peer: string): Promise<Account>
  credit(peer: string, amount: Amount): Promise<Account>
}

export interface ContractsPort {
  /** One page of the contracts, newest first (store/page.ts): never every row. */
  page(q: ContractPageQuery): Promise<ContractPageOf<ContractRecord>>
  /** How many contracts are stored in each state. */
  counts(): Promise<Partial<Record<StoredState, number>>>
  get(id: string): Promise<ContractRecord | undefined>
}

/** Who this contract-db is on the network, and where its books are (specs/contract-db.md, "Storage backends"). */
export interface IdentityPort {
  peerId(): string
  addrs(): string[]
  /** The store's backend: `level` or `postgres`. */
  backend(): StoreBackend
  /** This instance's name (several may share one PostgreSQL database). */
  instance(): string
}

export interface MetricsPort {
  /** Refused inbound frames, by reason. */
  rejections(): Readonly<Record<string, number>>
  /** The Prometheus text's content type. */
  readonly contentType: string
  /** The contract-db's metrics in the Prometheus text format (metrics.ts). */
  render(): Promise<string>
}

/** One-time login links to the operator's dashboard (web.ts); undefined: it has no listener. */
export interface DashboardPort {
  link(): { url: string; expiresAt: number } | undefined
}

export interface OperatorPorts {
  approvals: ApprovalsPort
  accounts: AccountsPort
  contracts: ContractsPort
  identity: IdentityPort
  metrics: MetricsPort
  dashboard?: DashboardPort
  log: Logger
}

/** A contract as listed by `GET /v1/contract-db/contracts`. */
export interface ContractSummary {
  contractId: string
  jobId: string
  state: string
  requester: string
  provider: string
  escrow: number
  /** The bid's price for a person ("3600/hour", specs/pricing.md). */
  price: string
  /** The per-hour rate, for a bid priced per hour only. */
  pricePerHour?: number
  maxDurationSeconds: number
  activatedAt: number
  paidToProvider?: number
  refundedToRequester?: number
  reason?: string
  /** When a claim was disputed by its requester (state `claimed`). */
  disputedAt?: number
}

export const summarize = (r: ContractRecord): ContractSummary => {
  const t = r.contract.terms
  return {
    contractId: t.contractId,
    jobId: t.jobId,
    state: r.state,
    requester: t.requester.peer,
    provider: t.provider.peer,
    escrow: t.escrow,
    ...priceView(priceOf(t.bid)),
    maxDurationSeconds: termsMaxDuration(t),
    activatedAt: r.activatedAt,
    paidToProvider: r.settlement?.paidToProvider,
    refundedToRequester: r.settlement?.refundedToRequester,
    reason: r.settlement?.reason,
    disputedAt: r.dispute?.at,
  }
}

const apiError = (code: string, message: string) => ({ error: { code, message } })

export class OperatorApi {
  private app?: FastifyInstance

  constructor(
    private readonly ports: OperatorPorts,
    private readonly init: { socketPath: string },
  ) {}

  get socketPath(): string {
    return this.init.socketPath
  }

  async start(): Promise<void> {
    if (this.app !== undefined) return
    const app = Fastify({ logger: false, bodyLimit: 64 * 1024 })
    this.routes(app)
    await claimSocket(this.init.socketPath)
    await app.listen({ path: this.init.socketPath })
    await chmod(this.init.socketPath, 0o600)
    await markOwned(this.init.socketPath)
    this.app = app
  }

  async stop(): Promise<void> {
    if (this.app !== undefined) await releaseSocket(this.init.socketPath)
    await this.app?.close()
    this.app = undefined
  }

  private routes(app: FastifyInstance): void {
    const { approvals, accounts, contracts, identity, metrics, dashboard, log } = this.ports
    app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, _req, reply) => {
      if (err instanceof RefusedError || err instanceof InvalidAmountError)
        return reply.status(400).send(apiError(err.code, err.message))
      const status = err.statusCode ?? 500
      if (status >= 500) log.error({ err }, 'api error')
      return reply
        .status(status)
        .send(apiError(err.code ?? (status >= 500 ? 'INTERNAL' : 'BAD_REQUEST'), err.message))
    })
    app.setNotFoundHandler((req, reply) =>
      reply.status(404).send(apiError('NOT_FOUND', `no route ${req.method} ${req.url}`)),
    )

    app.get('/v1/health', () => ({ ok: true }))
    app.get('/metrics', async (_req, reply) =>
      reply.header('content-type', metrics.contentType).send(await metrics.render()),
    )
    app.get('/v1/info', async () => {
      const byState = await contracts.counts()
      return {
        role: 'contract-db',
        peerId: identity.peerId(),
        addrs: identity.addrs(),
        backend: identity.backend(),
        instance: identity.instance(),
        approved: (await approvals.list()).length,
        contracts: byState,
        rejections: metrics.rejections(),
      }
    })

    // A one-time link to the dashboard (specs/dashboard.md): the socket's mode is the access control.
    app.post('/v1/dashboard/login', async (_req, reply) => {
      const link = dashboard?.link()
      if (link === undefined)
        return reply
          .status(409)
          .send(
            apiError(
              'DASHBOARD_OFF',
              'the dashboard is served on a TCP listener: set web (e.g. {"port": 0}) in the contract-db config',
            ),
          )
      return link
    })

    app.get('/v1/contract-db/approved', async () => ({ approved: await approvals.list() }))
    // Body (optional): { "roles": ["requester", "provider", "relay"] }; a list of at most 8 strings.
    app.put<{ Params: { peer: string }; Body: { roles?: unknown } | undefined }>(
      '/v1/contract-db/approved/:peer',
      (req) => approvals.approve(req.params.peer, rolesIn(req.body?.roles)),
    )
    app.delete<{ Params: { peer: string } }>('/v1/contract-db/approved/:peer', async (req) => ({
      peer: req.params.peer,
      revoked: await approvals.revoke(req.params.peer),
    }))

    app.get('/v1/contract-db/accounts', async () => ({ accounts: await accounts.list() }))
    app.get<{ Params: { peer: string } }>('/v1/contract-db/accounts/:peer', (req) =>
      accounts.get(req.params.peer),
    )
    app.post<{ Params: { peer: string }; Body: { amount?: unknown } }>(
      '/v1/contract-db/accounts/:peer/credit',
      (req) => accounts.credit(req.params.peer, req.body?.amount as number),
    )

    // Newest first, as `dms job list`, a page at a time: ?limit (1-1000, default 100), ?cursor
    // (the previous page's `next`), ?state. Bad ones are 400 BAD_LIMIT, BAD_CURSOR, BAD_STATE.
    app.get<{ Querystring: PageQuery }>('/v1/contract-db/contracts', async (req) => {
      const page = await contracts.page(pageIn(req.query))
      return { contracts: page.contracts.map(summarize), ...nextOf(page) }
    })
    // Claims their requesters disputed, for the operator to look at (specs/contract-db.md,
    // "Claims"): a page of the claimed contracts, those of them disputed; `next` for more.
    app.get<{ Querystring: PageQuery }>('/v1/contract-db/disputes', async (req) => {
      const page = await contracts.page({ ...pageIn(req.query), state: 'claimed' })
      return { disputes: page.contracts.filter((r) => r.dispute !== undefined), ...nextOf(page) }
    })
    app.get<{ Params: { id: string } }>('/v1/contract-db/contracts/:id', async (req, reply) => {
      const rec = await contracts.get(req.params.id)
      if (rec === undefined)
        return reply.status(404).send(apiError('UNKNOWN_CONTRACT', `no contract ${req.params.id}`))
      return rec
    })
  }
}

/** A listing's query string, as received: anything, checked by pageIn. */
interface PageQuery {
  limit?: unknown
  cursor?: unknown
  state?: unknown
}

/** A page query from a query string, checked before any read (400 with BAD_LIMIT, BAD_CURSOR, BAD_STATE). */
function pageIn(q: PageQuery | undefined): ContractPageQuery {
  const state = stateIn(q?.state)
  const after = cursorIn(q?.cursor)
  return {
    limit: limitIn(q?.limit),
    ...(state !== undefined ? { state } : {}),
    ...(after !== undefined ? { after } : {}),
  }
}

const nextOf = (page: ContractPageOf<unknown>) =>
  page.next === undefined ? {} : { next: cursorText(page.next) }

/** The roles of an approve request's body: a short list of strings (BAD_ROLE otherwise), or none. */
function rolesIn(v: unknown): string[] | undefined {
  if (v === undefined) return undefined
  if (!Array.isArray(v) || v.length > 8 || v.some((r) => typeof r !== 'string'))
    throw new RefusedError('BAD_ROLE', 'roles must be a list of role names (requester, provider, relay)')
  return v as string[]
}
