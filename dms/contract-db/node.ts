import { CONTRACT_DB_SOCKET } from './paths.js'
import { rm } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { systemClock, type Clock } from '../../actors/clock.js'
import type { KeyPair } from '../../actors/identity.js'
import { Lifecycle, type LifecycleStatus } from '../../actors/lifecycle.js'
import type { ActorSystem } from '../../actors/system.js'
import type { Host } from '../network/host.js'
import type { Libp2pTransport } from '../network/transport.js'
import { startPeerBase } from '../peer-base.js'
import type { Db } from '../store/db.js'
import type { NetworkConfig } from '../config.js'
import { envPassphrase, type PassphraseSource } from '../keys.js'
import { child, silentLogger } from '../log.js'
import { BlobService } from '../blobs/service.js'
import { BlobStore } from '../blobs/store.js'
import { startBlobActor } from '../blobs/transfer.js'
import { MetricsListener, type MetricsListenerConfig } from '../metrics/listener.js'
import { OutputsArbiter } from './arbiter.js'
import { ContractDbMetrics } from './metrics.js'
import { OperatorApi, type OperatorPorts } from './operator-api.js'
import { openContractDbStore, type ContractDbStoreConfig } from './store/open.js'
import { ContractDbService } from './service.js'
import { OperatorWeb } from './web.js'

/** Configuration of a contract-db process (`dms contract-db run`). Spec: specs/config.md. */
export interface ContractDbConfig {
  /** Holds `node.key`, `db/` and the operator socket. */
  dataDir: string
  /** libp2p listen multiaddrs. @default ['/ip4/127.0.0.1/tcp/0'] */
  listen?: string[]
  /** Peers to dial at start (multiaddrs ending in /p2p/<id>). @default [] */
  bootstrap?: string[]
  /** One-host network settings (tests, demo). @default false */
  oneHost?: boolean
  /** Discovery, connection limits, gossipsub overrides, frame and mailbox limits (as for a node). */
  network?: NetworkConfig
  /** The operator's REST socket (mode 0600); false disables it. @default '<dataDir>/contract-db.sock' */
  socket?: string | false
  /**
   * The operator's dashboard on a loopback TCP listener (specs/dashboard.md); `dms contract-db
   * dashboard` prints a sign-in link. @default none
   */
  web?: { host?: '127.0.0.1' | '::1'; port: number }
  /**
   * Prometheus metrics on a TCP listener of their own, to a read-only token (specs/contract-db.md,
   * "Metrics"); the operator socket serves them too (`GET /metrics`). @default none
   */
  metrics?: MetricsListenerConfig
  /** Lifetime of the approval credentials it issues (specs/contract-db.md). @default 600000 */
  approvalTtlMs?: number
  /** The most volunteer contracts one requester may have active (specs/contract-db.md). @default 16 */
  maxActiveVolunteerContracts?: number
  /** Deadlines (specs/contract-db.md, "Deadlines"). @default 600000 */
  settleGraceMs?: number
  /** @default 3600000 */
  claimWindowMs?: number
  /** @default 86400000 */
  disputeWindowMs?: number
  /** How often active contracts past their deadlines are expired. @default 60000 */
  expirySweepMs?: number
  /** Where the books live (specs/contract-db.md, "Storage backends"). @default { backend: 'level' } */
  store?: ContractDbStoreConfig
  /** This instance's name, reported by `/v1/info`. @default '<hostname>:<pid>' */
  instance?: string
}

export { CONTRACT_DB_SOCKET }

/**
 * The contract-db as its own peer: its own key, level database and libp2p host, the verifier
 * service on inbox `contract-db`, and the operator API on a local socket. `dms contract-db run`
 * runs one in its own process; in-process tests embed one the same way.
 */
export class ContractDbNode {
  key!: KeyPair
  db!: Db
  host!: Host
  transport!: Libp2pTransport
  system!: ActorSystem
  service!: ContractDbService
  api?: OperatorApi
  web?: OperatorWeb
  /** Counted at the service's events; served on the operator socket and the metrics listener. */
  metrics!: ContractDbMetrics
  metricsListener?: MetricsListener
  private readonly lifecycle: Lifecycle
  readonly clock: Clock
  readonly log: Logger

  private readonly passphrase: PassphraseSource
  private readonly killAfterLock?: string

  constructor(
    readonly config: ContractDbConfig,
    components: {
      clock?: Clock
      log?: Logger
      passphrase?: PassphraseSource
      /** The chaos run's fault point, as the process entry read it (dms/test-hooks.ts). @default none */
      killAfterLock?: string
    } = {},
  ) {
    this.clock = components.clock ?? systemClock
    this.log = components.log ?? silentLogger
    this.passphrase = components.passphrase ?? envPassphrase()
    this.killAfterLock = components.killAfterLock
    this.lifecycle = new Lifecycle((err, part) => this.log.warn({ err, part }, 'error while stopping'))
  }

  /** This instance's name (`instance` in the config), which `/v1/info` reports. */
  get instance(): string {
    return this.config.instance ?? `${hostname()}:${process.pid}`
  }

  get status(): LifecycleStatus {
    return this.lifecycle.status
  }

  get peerId(): string {
    return this.transport.peerId
  }

  addrs(): string[] {
    return this.transport.addrs().map((a) => (a.includes('/p2p/') ? a : `${a}/p2p/${this.peerId}`))
  }

  get socketPath(): string | undefined {
    return this.api?.socketPath
  }

  /** `host:port` of the operator's dashboard, when it has one. */
  get webAddress(): string | undefined {
    return this.web?.address
  }

  /** `host:port` of the metrics listener, when it has one. */
  get metricsAddress(): string | undefined {
    return this.metricsListener?.address
  }

  /** Starts the shared peer parts, the service and the operator API; a failed start stops what it started. */
  start(): Promise<void> {
    return this.lifecycle.start(() => this.startParts())
  }

  private async startParts(): Promise<void> {
    const cfg = this.config
    const { clock, log } = this
    // The same start as a node's: the database lock before the passphrase, then key, host, actors.
    const base = await startPeerBase(
      { ...cfg, roles: ['contract-db'], contractDb: 'self' },
      { clock, log, passphrase: this.passphrase },
      this.lifecycle,
    )
    ;({ db: this.db, key: this.key, host: this.host, transport: this.transport, system: this.system } = base)
    // Output archives of rejected results, fetched from their providers while they are checked,
    // and those of overruled ones handed on to their requesters for an hour (kept track of in
    // memory: what a crash or a stop left is dropped at the next start).
    const arbitrationDir = join(cfg.dataDir, 'arbitration')
    await rm(arbitrationDir, { recursive: true, force: true })
    const store = new BlobStore({ dir: arbitrationDir })
    await store.start()
    const blobs = new BlobService({
      store,
      db: this.db,
      log: child(log, 'dms:contract-db:blobs'),
      now: () => clock.now(),
    })
    // Serves the archives of overruled rejections to their requesters (granted to them only).
    const blobActor = startBlobActor(this.system, this.key, blobs)
    this.lifecycle.onStop(() => blobActor.stop(), 'blobs')
    const books = await openContractDbStore(cfg.store, { db: this.db, log })
    this.lifecycle.onStop(() => books.close(), 'store')
    this.service = new ContractDbService(
      {
        system: this.system,
        key: this.key,
        db: this.db,
        store: books.store,
        clock,
        log: child(log, 'dms:contract-db'),
        arbiter: (actor) =>
          new OutputsArbiter({ actor, blobs, clock, log: child(log, 'dms:contract-db:arbiter') }),
        killAfterLock: this.killAfterLock,
      },
      {
        approvalTtlMs: cfg.approvalTtlMs,
        maxActiveVolunteerContracts: cfg.maxActiveVolunteerContracts,
        ...(cfg.expirySweepMs !== undefined ? { expirySweepMs: cfg.expirySweepMs } : {}),
        deadlines: {
          ...(cfg.settleGraceMs !== undefined ? { settleGraceMs: cfg.settleGraceMs } : {}),
          ...(cfg.claimWindowMs !== undefined ? { claimWindowMs: cfg.claimWindowMs } : {}),
          ...(cfg.disputeWindowMs !== undefined ? { disputeWindowMs: cfg.disputeWindowMs } : {}),
        },
      },
    )
    await this.service.openBooks()
    // Subscribed before the service serves, so that no write goes uncounted.
    const svc = this.service
    const host = this.host
    this.metrics = new ContractDbMetrics({
      clock,
      backend: svc.backend,
      instance: this.instance,
      events: svc.events,
      receive: this.system,
      connectedPeers: () => new Set(host.getConnections().map((c) => c.remotePeer.toString())).size,
      contractStates: async () =>
        (await svc.listContracts()).map((r) => ({ id: r.contract.terms.contractId, state: r.state })),
      conservation: () => svc.conservation(),
    })
    this.lifecycle.onStop(() => this.metrics.stop(), 'metrics')
    this.service.start()
    this.lifecycle.onStop(() => this.service.stop(), 'service')
    await this.metrics.scan()
    if (cfg.metrics !== undefined) {
      this.metricsListener = new MetricsListener(this.metrics, {
        ...cfg.metrics,
        tokenPath: join(cfg.dataDir, 'metrics-token'),
      })
      await this.metricsListener.start()
      this.lifecycle.onStop(() => this.metricsListener?.stop(), 'metrics listener')
    }
    if (cfg.web !== undefined) {
      this.web = new OperatorWeb(
        {
          ...this.operatorPorts(child(log, 'dms:contract-db:web')),
          conservation: () => svc.conservation(),
          onChange: (fn) => svc.onChange(fn),
        },
        cfg.web,
      )
      await this.web.start()
      this.lifecycle.onStop(() => this.web?.stop(), 'web')
    }
    if (cfg.socket !== false) {
      this.api = new OperatorApi(this.operatorPorts(child(log, 'dms:contract-db:api')), {
        socketPath: cfg.socket ?? join(cfg.dataDir, CONTRACT_DB_SOCKET),
      })
      await this.api.start()
      this.lifecycle.onStop(() => this.api?.stop(), 'api')
    }
  }

  /** What the operator API uses: the service's operations, this peer's addresses, its counters. */
  private operatorPorts(log: Logger): OperatorPorts {
    const svc = this.service
    return {
      approvals: {
        list: () => svc.listApproved(),
        approve: (peer, roles) => svc.approve(peer, roles),
        revoke: (peer) => svc.revoke(peer),
      },
      accounts: {
        list: () => svc.listAccounts(),
        get: (peer) => svc.account(peer),
        credit: (peer, amount) => svc.credit(peer, amount),
      },
      contracts: {
        page: (q) => svc.contractPage(q),
        counts: () => svc.contractCounts(),
        get: (id) => svc.contract(id),
      },
      identity: {
        peerId: () => this.peerId,
        addrs: () => this.addrs(),
        backend: () => svc.backend,
        instance: () => this.instance,
      },
      metrics: {
        rejections: () => this.system.rejections,
        contentType: this.metrics.contentType,
        render: () => this.metrics.render(),
      },
      dashboard: {
        link: () => {
          const origin = this.web?.origin
          if (this.web === undefined || origin === undefined) return undefined
          const { code, expiresAt } = this.web.sessions.mintCode()
          return { url: `${origin}/dashboard/login?code=${code}`, expiresAt }
        },
      },
      log,
    }
  }

  /** Stops every started part, last started first. Idempotent. */
  stop(): Promise<void> {
    return this.lifecycle.stop()
  }
}
