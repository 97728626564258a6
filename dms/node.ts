import type { Logger } from 'pino'
import { systemClock, type Clock } from '../actors/clock.js'
import type { KeyPair } from '../actors/identity.js'
import { Lifecycle, type LifecycleStatus } from '../actors/lifecycle.js'
import type { ActorSystem } from '../actors/system.js'
import type { Host } from './network/host.js'
import type { Libp2pTransport } from './network/transport.js'
import type { Upkeep } from './network/upkeep.js'
import type { Db } from './store/db.js'
import type { NodeMetrics } from './api/metrics/node-metrics.js'
import type { MetricsListener } from './metrics/listener.js'
import type { ApiServer } from './api/server.js'
import type { NodeConfig } from './config.js'
import type { BlobService } from './blobs/service.js'
import type { ApprovalClient } from './contract-clients/approval-client.js'
import { envPassphrase } from './keys.js'
import { silentLogger } from './log.js'
import type { Orchestrator } from './orchestrator/orchestrator.js'
import type { QueueBook } from './orchestrator/queues/queue-book.js'
import type { ProviderService } from './provider/provider.js'
import type { WorkflowRunner } from './workflows/runner.js'
import type { Functions } from './functions/functions.js'
import type { ResourceLedger } from './resources/ledger.js'
import type { MachineMeter } from './resources/measure.js'
import type { Onboarding } from './resources/onboarding.js'
import type { ProcessFaults } from './process-guard.js'
import { DmsError } from '../actors/errors.js'
import { MissingComponentError, type Components, type NodeComponents } from './parts/components.js'
import { NODE_PARTS } from './parts/index.js'

export type { NodeComponents } from './parts/components.js'

/**
 * One DMS node: the composition root. Builds its parts from config (no singletons) as the list
 * `NODE_PARTS` (dms/parts/), starts them in list order, and stops them in reverse; a failed start
 * stops what it started and logs the part that failed.
 */
export class DmsNode {
  /** Every component of this node: what it was given, then what each started part provided. */
  readonly components: Components
  private readonly lifecycle: Lifecycle

  constructor(
    readonly config: NodeConfig,
    given: NodeComponents = {},
  ) {
    const log = given.log ?? silentLogger
    this.components = {
      ...given,
      config,
      clock: given.clock ?? systemClock,
      log,
      passphrase: given.passphrase ?? envPassphrase(),
      requestStop: given.onStopRequest ?? (() => void this.stop()),
      addrs: () => this.addrs(),
      approvals: new Map(),
    }
    this.lifecycle = new Lifecycle(
      (err, part) => log.warn({ err, part }, 'error while stopping'),
      // An error with a code (DATA_DIR_IN_USE, a bad config...) is the caller's to tell its user in
      // one line; only an unexpected one is worth a warning naming the part.
      (err, part) =>
        err instanceof DmsError
          ? log.debug({ err, part }, 'a part failed to start: stopping what started')
          : log.warn({ err, part }, 'a part failed to start: stopping what started'),
    )
  }

  get status(): LifecycleStatus {
    return this.lifecycle.status
  }

  get clock(): Clock {
    return this.components.clock
  }

  get log(): Logger {
    return this.components.log
  }

  /** The process guard's counts, when the process has one (`dms run`). */
  get faults(): ProcessFaults | undefined {
    return this.components.faults
  }

  get key(): KeyPair {
    return this.started('key')
  }

  get db(): Db {
    return this.started('db')
  }

  get host(): Host {
    return this.started('host')
  }

  get transport(): Libp2pTransport {
    return this.started('transport')
  }

  get system(): ActorSystem {
    return this.started('system')
  }

  /** Re-dials (dial keeper) and DHT discovery around the host. */
  get upkeep(): Upkeep {
    return this.started('upkeep')
  }

  /** Content-addressed blobs of this node: job inputs, output archives. */
  get blobs(): BlobService {
    return this.started('blobs')
  }

  /** The node's metrics (`GET /metrics`), counted at events. */
  get metrics(): NodeMetrics {
    return this.started('metrics')
  }

  /** Payloads refused at decode, by behaviour and reason (`dms_payloads_refused_total`). */
  get payloadRefusals(): Record<string, Record<string, number>> {
    return this.components.payloadRefusals ?? {}
  }

  /** This node's approval credentials, by contract-db peer id (specs/contract-db.md). */
  get approvals(): ReadonlyMap<string, ApprovalClient> {
    return this.components.approvals
  }

  get ledger(): ResourceLedger | undefined {
    return this.components.ledger
  }

  /** The provider's machine measurement (cached; refreshed on demand). */
  get meter(): MachineMeter | undefined {
    return this.components.meter
  }

  /** `dms onboard` / `dms offboard` / `dms resources` over this node's ledger. */
  get onboarding(): Onboarding | undefined {
    return this.components.onboarding
  }

  get provider(): ProviderService | undefined {
    return this.components.provider
  }

  get orchestrator(): Orchestrator | undefined {
    return this.components.orchestrator
  }

  get queues(): QueueBook | undefined {
    return this.components.queues
  }

  /** The requester's workers and actions (specs/functions.md). */
  get functions(): Functions | undefined {
    return this.components.functions
  }

  /** The requester's workflows (tasks run as the orchestrator's jobs). */
  get workflows(): WorkflowRunner | undefined {
    return this.components.workflows
  }

  get api(): ApiServer | undefined {
    return this.components.api
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

  /** The metrics listener (config `metrics`): its `address` and `token` once started. */
  get metricsListener(): MetricsListener | undefined {
    return this.components.metricsListener
  }

  /** `host:port` of the API's TCP listener, when `api.tcp` is configured. */
  get apiTcpAddress(): string | undefined {
    return this.api?.tcpAddress
  }

  /** Starts every part in list order; a failed start stops what it started. Idempotent. */
  start(): Promise<void> {
    return this.lifecycle.startList(this.components, NODE_PARTS)
  }

  /** A component a started part provided (a node not started has none). */
  private started<K extends keyof Components>(k: K): NonNullable<Components[K]> {
    const v = this.components[k]
    if (v === undefined) throw new MissingComponentError(String(k))
    return v
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
    this.components.requestStop()
  }
}
