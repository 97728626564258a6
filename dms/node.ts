import { join } from 'node:path'
import type { Logger } from 'pino'
import { systemClock, type Clock } from '../actors/clock.js'
import { KeyPair } from '../actors/identity.js'
import { Lifecycle, type LifecycleStatus } from '../actors/lifecycle.js'
import type { ActorSystem } from '../actors/system.js'
import type { Host } from './network/host.js'
import type { Libp2pTransport } from './network/transport.js'
import type { Upkeep } from './network/upkeep.js'
import type { Db } from './store/db.js'
import { startPeerBase } from './peer-base.js'
import type { NodeMetrics } from './api/metrics/node-metrics.js'
import { ApiServer } from './api/server.js'
import { apiPorts, workflowJobsPort } from './node-adapters.js'
import { nodeMetrics, providerMetrics, requesterMetrics } from './node-metrics.js'
import type { NodeConfig } from './config.js'
import { BlobService } from './blobs/service.js'
import { ApprovalClient } from './contracts/approval-client.js'
import { presentedCredential } from './contracts/relay-credentials.js'
import { ApprovalPresenter } from './network/relay/present.js'
import { BlobStore } from './blobs/store.js'
import { startBlobActor } from './blobs/transfer.js'
import { BlobUploads } from './blobs/uploads.js'
import type { Executor } from './executor/executor.js'
import { envPassphrase, type PassphraseSource } from './keys.js'
import { child, silentLogger } from './log.js'
import type { Orchestrator } from './orchestrator/orchestrator.js'
import type { QueueBook } from './orchestrator/queues/queue-book.js'
import type { ProviderService } from './provider/provider.js'
import type { WorkflowRunner } from './workflows/runner.js'
import type { ResourceLedger } from './resources/ledger.js'
import type { MachineMeter } from './resources/measure.js'
import type { Onboarding } from './resources/onboarding.js'
import { applyConfigOffer } from './resources/config-offer.js'
import type { ProcessFaults } from './process-guard.js'

export interface NodeComponents {
  clock?: Clock
  log?: Logger
  /** Overrides the Docker executor (benchmarks and tests only). */
  executor?: Executor
  /** Unseals the node key. @default DMS_PASSPHRASE from the environment */
  passphrase?: PassphraseSource
  /** Errors caught by the process's last-resort guard (`dms run`), shown in /metrics. */
  faults?: ProcessFaults
  /**
   * Called when the node asks to be stopped (`dms drain --stop` once drained): `dms run` stops
   * gracefully and exits. @default the node stops itself
   */
  onStopRequest?: () => void
}

/**
 * One DMS node: the composition root. Builds every part from config (no singletons), starts them
 * in dependency order, and stops them in reverse; a failed start stops what it started.
 */
export class DmsNode {
  key!: KeyPair
  db!: Db
  host!: Host
  transport!: Libp2pTransport
  system!: ActorSystem
  /** Re-dials (dial keeper) and DHT discovery around the host. */
  upkeep!: Upkeep
  /** Content-addressed blobs of this node: job inputs, output archives. */
  blobs!: BlobService
  ledger?: ResourceLedger
  /** The provider's machine measurement (cached; refreshed on demand). */
  meter?: MachineMeter
  /** `dms onboard` / `dms offboard` / `dms resources` over this node's ledger. */
  onboarding?: Onboarding
  provider?: ProviderService
  orchestrator?: Orchestrator
  queues?: QueueBook
  /** The requester's workflows (tasks run as the orchestrator's jobs). */
  workflows?: WorkflowRunner
  /**
   * This node's approval credentials, by contract-db peer id (one per contract-db its roles
   * name): attached to bid requests, bids and declines (specs/contract-db.md).
   */
  readonly approvals = new Map<string, ApprovalClient>()
  /** Payloads refused at decode, by behaviour and reason (`dms_payloads_refused_total`). */
  payloadRefusals: Record<string, Record<string, number>> = {}
  /** The node's metrics (`GET /metrics`), counted at events. */
  metrics!: NodeMetrics
  api?: ApiServer
  private readonly lifecycle: Lifecycle
  readonly clock: Clock
  readonly log: Logger
  /** The process guard's counts, when the process has one (`dms run`). */
  readonly faults?: ProcessFaults

  constructor(
    readonly config: NodeConfig,
    private readonly components: NodeComponents = {},
  ) {
    this.clock = components.clock ?? systemClock
    this.log = components.log ?? silentLogger
    this.faults = components.faults
    this.lifecycle = new Lifecycle((err, part) => this.log.warn({ err, part }, 'error while stopping'))
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

  /** `host:port` of the API's TCP listener, when `api.tcp` is configured. */
  get apiTcpAddress(): string | undefined {
    return this.api?.tcpAddress
  }

  /** Starts every part in dependency order; a failed start stops what it started. Idempotent. */
  start(): Promise<void> {
    return this.lifecycle.start(() => this.startParts())
  }

  private async startParts(): Promise<void> {
    const cfg = this.config
    const { clock, log } = this
    const roles = [
      ...(cfg.requester !== undefined ? ['requester'] : []),
      ...(cfg.provider !== undefined ? ['provider'] : []),
    ]
    const base = await startPeerBase(
      { ...cfg, roles, contractDb: cfg.provider?.contractDb ?? cfg.requester?.contractDb.peer },
      { clock, log, passphrase: this.components.passphrase ?? envPassphrase() },
      this.lifecycle,
    )
    ;({ db: this.db, key: this.key, host: this.host, transport: this.transport, system: this.system } = base)
    this.payloadRefusals = base.payloadRefusals
    this.upkeep = base.upkeep
    const fed = nodeMetrics(base, this.approvals, this.components.faults)
    this.metrics = fed.metrics
    this.lifecycle.onStop(() => fed.stop(), 'metrics')

    // The data plane: content-addressed blobs (job inputs, output archives), served to granted peers.
    const store = new BlobStore({ dir: join(cfg.dataDir, 'blobs') })
    await store.start()
    this.blobs = new BlobService({
      store,
      db: this.db,
      log: child(log, 'dms:blobs'),
      now: () => clock.now(),
      // A grantee's release never deletes what a job of this node uses (its inputs, its outputs).
      inUse: async (sha) => ((await this.orchestrator?.store.index.blobUsers(sha)) ?? 0) > 0,
      // A provider keeps an unsettled contract's archive until the settlement, released or not.
      deferRelease: async (r) => (await this.provider?.archives.deferred(r)) === true,
    })
    const blobActor = startBlobActor(this.system, this.key, this.blobs)
    this.lifecycle.onStop(() => blobActor.stop(), 'blobs')

    // Each contract-db named by a role: its approval credential, asked for in the background.
    const cdbs = new Map<string, string[]>()
    if (cfg.requester !== undefined) cdbs.set(cfg.requester.contractDb.peer, cfg.requester.contractDb.addrs)
    if (cfg.provider !== undefined && !cdbs.has(cfg.provider.contractDb))
      cdbs.set(
        cfg.provider.contractDb,
        cfg.provider.contractDbAddrs ??
          (cfg.bootstrap ?? []).filter((a) => a.endsWith(`/p2p/${cfg.provider?.contractDb}`)),
      )
    for (const [peer, addrs] of cdbs) {
      const client = new ApprovalClient(
        { system: this.system, db: this.db, clock, log: child(log, 'dms:approval') },
        { contractDb: { peer, addrs } },
      )
      await client.start()
      this.lifecycle.onStop(() => client.stop(), 'approval')
      this.approvals.set(peer, client)
    }
    if (this.approvals.size > 0) {
      // Relays serve approved peers only: each is shown this node's credentials (and each renewal).
      const presenter = new ApprovalPresenter(
        {
          host: this.host,
          clock,
          log: child(log, 'dms:network'),
          credentials: () =>
            [...this.approvals.values()].flatMap((a) => a.current() ?? []).map(presentedCredential),
        },
        { reserve: cfg.network?.relay?.reserve === true },
      )
      for (const a of this.approvals.values()) a.events.on('renewed', () => presenter.renewed())
      await presenter.start()
      this.lifecycle.onStop(() => presenter.stop(), 'relay approval')
    }

    if (cfg.provider !== undefined) {
      const p = cfg.provider
      // Each role's code is loaded only by a node that plays it (an idle node's memory:
      // specs/benchmarks.md, "Idle memory").
      const [{ ResourceLedger }, { DockerExecutor }, { MachineMeter }, { Onboarding }, { ProviderService }] =
        await Promise.all([
          import('./resources/ledger.js'),
          import('./executor/docker/docker-executor.js'),
          import('./resources/measure.js'),
          import('./resources/onboarding.js'),
          import('./provider/provider.js'),
        ])
      this.ledger = new ResourceLedger({ db: this.db, clock, log: child(log, 'dms:resources') })
      await this.ledger.start()
      this.lifecycle.onStop(() => this.ledger?.stop(), 'ledger')
      // Locks whose contract never came (e.g. the node died meanwhile) are released at start.
      for (const e of this.ledger.overdueLocks()) await this.ledger.release(e.id)
      const executor =
        this.components.executor ??
        new DockerExecutor(
          { log: child(log, 'dms:executor') },
          {
            socketPath: p.docker?.socketPath,
            pullImages: p.docker?.pullImages,
            diskQuota: p.docker?.diskQuota,
            workDir: join(cfg.dataDir, 'work'),
            // Archives are written next to the blob store, so publishing one is a rename.
            archiveDir: this.blobs.store.tmpDir,
            owner: this.peerId,
            // Outputs travel as a blob (an archive fetched in chunks); logs travel in the result
            // and live in /dms/job/log messages, so they stay small enough for one frame.
            maxOutputBytes: p.maxOutputBytes ?? 256 * 1024 * 1024,
            maxLogBytes: 256 * 1024,
          },
        )
      this.meter = new MachineMeter({ dockerInfo: () => executor.info(), clock }, { dataDir: cfg.dataDir })
      this.onboarding = new Onboarding({ ledger: this.ledger, meter: this.meter, clock })
      await applyConfigOffer(this.ledger, p.offer, { clock: this.clock, log: this.log })
      this.provider = new ProviderService(
        {
          system: this.system,
          transport: this.transport,
          key: this.key,
          ledger: this.ledger,
          machine: this.meter,
          executor,
          db: this.db,
          clock,
          log: child(log, 'dms:provider'),
          blobs: this.blobs,
          workDir: join(cfg.dataDir, 'work'),
          approval: this.approvals.get(p.contractDb) as ApprovalClient,
        },
        {
          contractDb: p.contractDb,
          bidTtlMs: p.bidTtlMs,
          heartbeatMs: p.heartbeatMs,
          provisionTimeoutMs: p.provisionTimeoutMs,
          requesterCap: p.requesterCap,
          bidRequestRate: p.bidRequestRate,
          images: { registries: p.docker?.registries },
          defaultDiskBytes: p.defaultDiskBytes,
          maxUnpaidJobs: p.maxUnpaidJobs,
          price: p.price,
          laterBids: p.laterBids,
          maxStartAheadSeconds: p.maxStartAheadSeconds,
          claimSweepMs: p.claimSweepMs,
          outputsKeepMs: p.outputsKeepMs,
          outputsBytesPerRequester: p.outputsBytesPerRequester,
          preferences: {
            allowedImages: p.allowedImages,
            allowNetwork: p.allowNetwork,
            maxDurationSeconds: p.maxDurationSeconds,
            minPrice: p.minPrice,
            allowRequesters: p.allowRequesters,
            denyRequesters: p.denyRequesters,
            maxConcurrentJobs: p.maxConcurrentJobs,
          },
        },
      )
      // Its metrics follow each stored change from before its start (allocations it restores).
      const feed = providerMetrics(this.metrics, this.provider, this.ledger, this.db)
      this.lifecycle.onStop(() => feed.stop(), 'provider metrics')
      await this.provider.start()
      this.lifecycle.onStop(() => this.provider?.stop(), 'provider')
      await feed.scan()
    }
    if (cfg.requester !== undefined) {
      const [{ Orchestrator }, { outputsFetchOf }, { QueueBook }, { WorkflowRunner }, { ContractDbClient }] =
        await Promise.all([
          import('./orchestrator/orchestrator.js'),
          import('./orchestrator/config.js'),
          import('./orchestrator/queues/queue-book.js'),
          import('./workflows/runner.js'),
          import('./contracts/client.js'),
        ])
      this.orchestrator = new Orchestrator(
        {
          system: this.system,
          transport: this.transport,
          key: this.key,
          db: this.db,
          clock,
          log: child(log, 'dms:orchestrator'),
          blobs: this.blobs,
          approval: this.approvals.get(cfg.requester.contractDb.peer) as ApprovalClient,
        },
        cfg.requester,
      )
      this.lifecycle.onStop(() => this.orchestrator?.stop(), 'orchestrator')
      const feed = requesterMetrics(this.metrics, this.orchestrator)
      this.lifecycle.onStop(() => feed.stop(), 'requester metrics')
      // Jobs an earlier process left unfinished carry on from their persisted snapshots.
      await this.orchestrator.start()
      await feed.scan()
      this.queues = new QueueBook(
        { db: this.db, clock, log: child(log, 'dms:queues'), jobs: this.orchestrator.forQueues() },
        { idleExpirySeconds: cfg.requester.queueIdleExpirySeconds },
      )
      await this.queues.start()
      this.lifecycle.onStop(() => this.queues?.stop(), 'queues')
      // After the jobs: a restored workflow reads its tasks' jobs as they are now. A new workflow's
      // escrow plan is checked against this requester's balance at its contract-db.
      const balanceActor = this.system.spawn('workflows', KeyPair.generate())
      this.lifecycle.onStop(() => balanceActor.stop(), 'workflows balance')
      const cdb = new ContractDbClient(
        { actor: balanceActor, clock },
        { contractDb: cfg.requester.contractDb, timeoutMs: cfg.requester.requestTimeoutMs, attempts: 2 },
      )
      this.workflows = new WorkflowRunner(
        {
          db: this.db,
          clock,
          log: child(log, 'dms:workflows'),
          jobs: workflowJobsPort(this.orchestrator, {
            system: this.system,
            blobs: this.blobs,
            clock,
            ...outputsFetchOf(cfg.requester),
          }),
          blobs: this.blobs.store,
          balance: async () => (await cdb.balance()).balance,
        },
        { maxTasks: cfg.requester.maxWorkflowTasks },
      )
      await this.workflows.start()
      this.lifecycle.onStop(() => this.workflows?.stop(), 'workflows')
    }
    if (cfg.api !== false) {
      const ports = apiPorts({
        peerId: this.peerId,
        addrs: () => this.addrs(),
        host: this.host,
        transport: this.transport,
        system: this.system,
        blobs: this.blobs,
        uploads: new BlobUploads(
          { store: this.blobs.store, clock },
          { idleMs: cfg.api?.uploadIdleMs, maxInFlightBytes: cfg.api?.uploadsMaxBytes },
        ),
        approvals: this.approvals,
        payloadRefusals: this.payloadRefusals,
        metrics: this.metrics,
        orchestrator: this.orchestrator,
        queues: this.queues,
        requestStop: () => this.requestStop(),
        workflows: this.workflows,
        provider: this.provider,
        onboarding: this.onboarding,
        db: this.db,
      })
      this.api = new ApiServer(
        { ports, log: child(log, 'dms:api') },
        {
          socketPath: cfg.api?.socket ?? join(cfg.dataDir, 'dms.sock'),
          tcp: cfg.api?.tcp,
          tokenPath: join(cfg.dataDir, 'api-token'),
        },
      )
      await this.api.start()
      this.lifecycle.onStop(() => this.api?.stop(), 'api')
    }
  }

  /**
   * Stops every started part, last started first. Idempotent. With `drainMs` (a graceful stop,
   * `dms run` on SIGTERM) a provider first declines new work and lets its runs finish for up to
   * that long; the runs still going at the deadline are cancelled, and the log says how many.
   */
  async stop(opts: { drainMs?: number } = {}): Promise<void> {
    if (opts.drainMs !== undefined && opts.drainMs > 0 && this.provider !== undefined) {
      const live = this.provider.modes.view().liveBids
      const left = await this.provider.finishWork(opts.drainMs)
      if (left > 0)
        this.log.warn(
          { bids: left, deadlineMs: opts.drainMs },
          'stop: drain deadline passed, cancelling the work still in progress',
        )
      else if (live > 0) this.log.info({ bids: live }, 'stop: every run finished')
    }
    return this.lifecycle.stop()
  }

  /** Asks for this node to be stopped (by `dms run`, which then exits). */
  requestStop(): void {
    if (this.components.onStopRequest !== undefined) this.components.onStopRequest()
    else void this.stop()
  }
}
