/**
 * The requester role: takes posted jobs through the market to settlement, one xstate job machine
 * (job-machine.ts) and one actor (inbox `job/<id>`, job-inbox.ts) per job. This file keeps the
 * registry of running jobs and their lifecycle; the steps are in steps/, the stored jobs in
 * job-store.ts, the provider records in provider-records.ts, bid admission in bid-admission.ts.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { every, type Clock } from '../../actors/clock.js'
import { DmsError } from '../../actors/errors.js'
import { BadCursorError, JobEndedError, JobLiveError, JobNotFoundError } from './job-errors.js'
import type { KeyPair } from '../../actors/identity.js'
import type { ActorSystem } from '../../actors/system.js'
import type { Transport } from '../../actors/transport.js'
import type { BlobService } from '../blobs/service.js'
import type { JobLog, JobUpdate } from '../protocol/messages.js'
import type { Repo, Db } from '../store/db.js'
import { BidAdmission } from './bid-admission.js'
import { BidAudience } from './bid-audience.js'
import { CapacityBoard } from './capacity-board.js'
import { CapacityNewsListener } from './capacity-news.js'
import { ProviderJoins } from './provider-joins.js'
import { Wakers } from './wakers.js'
import { jobConfigOf, type JobConfig, type OrchestratorInit } from './config.js'
import { resolveInputs } from './data-plane.js'
import type { JobId, JobRecord } from './job-record.js'
import type { JobSpec } from './job-spec.js'
import { decodeCursor, type JobQuery } from './job-index.js'
import { FINAL_STATES, JobStore, type StoredJob } from './job-store.js'
import { installFaultKill } from './fault-kill.js'
import { runQuote, type Quote } from './quote.js'
import { ProviderRecords, type ProviderRecord } from './provider-records.js'
import { restoredSnapshot } from './job-snapshot.js'
import { createRunningJob, type RunningJob } from './running-job.js'
import type { QueueJobs } from './queues/queue-book.js'
import { Retention, type PruneReport, type RetentionPolicy } from './retention.js'
import { FundsClient } from '../contract-clients/funds-client.js'
import type { Approvals } from './steps/deps.js'

export { FINAL_STATES, type OrchestratorInit, type StoredJob }
export { BadCursorError, JobEndedError, JobLiveError, JobNotFoundError }

export interface OrchestratorComponents {
  /** The restore tests' fault point (fault-kill.ts; dms/test-hooks.ts). @default none */
  killInState?: string
  system: ActorSystem
  transport: Transport
  key: KeyPair
  db: Db
  clock: Clock
  log: Logger
  /** This node's blobs: job inputs served to providers, output archives fetched from them. */
  blobs: BlobService
  /**
   * This node's approval credential from its contract-db, attached to every bid request:
   * providers answer only approved requesters (specs/protocol.md, "Approval").
   */
  approval: Approvals
}

/** How often `requester.retention` is applied while the node runs. */
const PRUNE_EVERY_MS = 3_600_000

export class Orchestrator {
  /** Every job, stored on each transition of its machine; change listeners. */
  readonly store: JobStore
  /** The stored jobs (sublevel `jobs`). */
  readonly jobs: Repo<StoredJob>
  /** This requester's record of each provider it used, read through a cache for ranking. */
  readonly records: ProviderRecords
  /** The same records as stored (sublevel `provider-records`: completed jobs, faults). */
  readonly providers: Repo<ProviderRecord>
  /** Which providers bid windows wait for (silent ones are learned and left out). */
  readonly audience: BidAudience
  /** Keeps each job's usable bids and declines; counts the others by reason. */
  readonly admission: BidAdmission
  /** Bids not ranked, by reason (`dms_requester_bids_ignored_total`; specs/protocol.md). */
  readonly bidsIgnored: Record<string, number>
  /** Declines not kept, by reason (`dms_requester_declines_ignored_total`). */
  readonly declinesIgnored: Record<string, number>
  /** Queued jobs waiting for capacity news, and the news as it arrives. */
  readonly capacity: CapacityBoard
  /** Listens to capacity news (CAPACITY_TOPIC): counts kept and ignored news by reason. */
  readonly capacityNews: CapacityNewsListener
  /** Wakes queued jobs when a provider joins the bid topic. */
  readonly joins: ProviderJoins
  /** Prunes ended jobs, their blobs and grants (`requester.retention`, `dms job prune`). */
  readonly retention: Retention
  /** This requester's funds proof from its contract-db, carried in every bid request. */
  readonly funds: FundsClient
  private stopPruning?: () => void
  private readonly running = new Map<JobId, RunningJob>()
  private readonly updateListeners = new Set<(jobId: JobId, update: JobUpdate) => void>()
  private readonly logListeners = new Set<(jobId: JobId, log: JobLog) => void>()
  private readonly cfg: JobConfig

  constructor(
    private readonly c: OrchestratorComponents,
    private readonly init: OrchestratorInit,
  ) {
    this.store = new JobStore(c)
    installFaultKill(this.store, c.killInState) // fault injection for the restore tests: unset, nothing
    this.jobs = this.store.repo
    this.retention = new Retention({ ...c, store: this.store }, (id) => this.running.has(id))
    this.records = new ProviderRecords(c.db)
    this.providers = this.records.repo
    this.cfg = jobConfigOf(init)
    this.audience = new BidAudience({ silentAfter: init.bidSilentAfter, stragglerMs: init.bidStragglerMs })
    this.capacity = new CapacityBoard(new Wakers(c.clock))
    // A provider's bids earn its capacity news credit; its declines show it approved.
    const wakers = this.capacity.wakers
    this.admission = new BidAdmission(c, init.contractDb.peer, {
      bid: (peer, until) => wakers.bid(peer, until),
      decline: (peer, until) => wakers.approved(peer, until),
    })
    this.bidsIgnored = this.admission.bidsIgnored
    this.declinesIgnored = this.admission.declinesIgnored
    this.capacityNews = new CapacityNewsListener({
      ...c,
      board: this.capacity,
      contractDb: init.contractDb.peer,
      unsubscribe: c.transport.unsubscribe?.bind(c.transport),
    })
    this.joins = new ProviderJoins({ ...c, board: this.capacity })
    this.funds = new FundsClient(c, {
      contractDb: init.contractDb,
      requestTimeoutMs: this.cfg.requestTimeoutMs,
    })
    // An operator sees a job start waiting, and until when (its later rounds are debug lines).
    this.store.onChange(({ state, record }) => {
      if (state === 'queued' && record.queue?.rounds === 1)
        c.log.info({ jobId: record.id, deadline: record.queue.deadline }, 'job queued')
    })
  }

  /** This node's time (a `startAt` is checked against it). */
  now(): number {
    return this.c.clock.now()
  }

  /** Called with every persisted change of any job (for the API's live views and tests). */
  onChange(fn: (job: StoredJob) => void): () => void {
    return this.store.onChange(fn)
  }

  /** Called with each piece of live output a job's provider streams (`/dms/job/log`). */
  onLog(fn: (jobId: JobId, log: JobLog) => void): () => void {
    this.logListeners.add(fn)
    return () => this.logListeners.delete(fn)
  }

  /** The usage so far of the jobs running here, summed (for /metrics; from memory). */
  liveUsageTotals(): { cpuSeconds: number; memoryBytes: number } {
    let cpuSeconds = 0
    let memoryBytes = 0
    for (const r of this.running.values()) {
      cpuSeconds += r.session.usage?.cpuSeconds ?? 0
      memoryBytes += r.session.usage?.memoryBytes ?? 0
    }
    return { cpuSeconds, memoryBytes }
  }

  /**
   * Called with each progress update a job's provider sends (live, before it is persisted), and
   * each heartbeat that carries the usage so far.
   */
  onUpdate(fn: (jobId: JobId, update: JobUpdate) => void): () => void {
    this.updateListeners.add(fn)
    return () => this.updateListeners.delete(fn)
  }

  /** The live output received so far of a running job (undefined when it is not running here). */
  liveLogs(id: JobId, member?: string): { stdout: string; stderr: string; truncated: boolean } | undefined {
    return this.running.get(id)?.session.logs(member)
  }

  /**
   * Restores every job an earlier process left in a non-final state from its persisted snapshot.
   * The step of the state it was in runs again (xstate restarts an active promise actor), and its
   * deadlines are computed from the record (absolute times), so they are re-armed, not reset.
   */
  async start(): Promise<number> {
    await this.capacityNews.start()
    this.joins.start()
    this.funds.start()
    const indexed = await this.store.migrate()
    if (indexed > 0) this.c.log.info({ indexed }, 'stored jobs indexed for listing')
    let restored = 0
    for (const job of await this.store.values()) {
      if (FINAL_STATES.includes(job.state) || job.snapshot === undefined) continue
      if (this.running.has(job.record.id)) continue
      await this.launch(job.record, { snapshot: restoredSnapshot(job.snapshot, job.record), job })
      restored++
    }
    if (restored > 0) this.c.log.info({ restored }, 'jobs restored after restart')
    const policy = this.init.retention
    if (policy !== undefined) {
      const prune = () =>
        void this.retention.prune(policy).catch((err: unknown) => this.c.log.warn({ err }, 'prune failed'))
      prune()
      this.stopPruning = every(this.c.clock, PRUNE_EVERY_MS, prune)
    }
    return restored
  }

  stop(): void {
    this.capacityNews.stop()
    this.joins.stop()
    this.funds.stop()
    this.stopPruning?.()
    for (const r of this.running.values()) {
      r.machine.stop()
      r.actor.stop()
    }
    this.running.clear()
  }

  async get(id: JobId): Promise<StoredJob | undefined> {
    const stored = await this.store.get(id)
    const live = this.running.get(id)
    if (stored !== undefined && live !== undefined) {
      stored.record.updates = [...live.session.updates]
      if (live.session.usage !== undefined) stored.liveUsage = { ...live.session.usage }
    }
    return stored
  }

  /** Every stored job (a full read: for the metrics' scan at start, never for a request). */
  list(): Promise<StoredJob[]> {
    return this.store.values()
  }

  /** One page of stored jobs, newest first, from the listing indexes (specs/rest-api.md). */
  async page(q: JobQuery): Promise<{ jobs: StoredJob[]; next?: string }> {
    let position: string | undefined
    if (q.cursor !== undefined) {
      position = decodeCursor(q.cursor)
      if (position === undefined) throw new BadCursorError()
    }
    const page = await this.store.page({ ...q, position })
    return {
      ...page,
      jobs: await Promise.all(page.jobs.map(async (j) => (await this.get(j.record.id)) ?? j)),
    }
  }

  /**
   * Accepts a validated spec and starts its journey; returns once the job is stored. With `id`
   * (a workflow's task), a job already stored under it is returned and nothing is posted.
   */
  async post(parsed: JobSpec, opts: { id?: JobId } = {}): Promise<StoredJob> {
    if (opts.id !== undefined) {
      const existing = await this.get(opts.id)
      if (existing !== undefined) return existing
    }
    // Inline inputs become blobs here, so the stored job holds ids, never content.
    const inputs = await resolveInputs(this.c.blobs, parsed.inputs, parsed.resources.diskBytes)
    const spec: JobSpec = {
      ...parsed,
      inputs,
      // The node's default, stored with the job so that a restart with another config keeps it.
      queueTimeoutSeconds: parsed.queueTimeoutSeconds ?? this.init.queueTimeoutSeconds ?? 0,
    }
    if (inputs.length === 0) delete spec.inputs
    return this.launch(this.newRecord(spec, opts.id))
  }

  private newRecord(spec: JobSpec, id?: JobId): JobRecord {
    return {
      id: id ?? randomUUID(),
      spec,
      createdAt: this.c.clock.now(),
      history: [],
      bids: [],
      declines: [],
      tried: [],
      updates: [],
    }
  }

  /**
   * Posts a new job from the spec of an ended job, linked to it (`rerunOf`). It joins `queue`
   * (the caller decides whether the old job's queue still takes jobs), or none.
   */
  async rerun(id: JobId, queue: string | undefined): Promise<StoredJob> {
    const stored = await this.store.get(id)
    if (stored === undefined) throw new JobNotFoundError(id)
    if (!FINAL_STATES.includes(stored.state)) throw new JobLiveError(id, stored.state)
    const spec: JobSpec = { ...stored.record.spec }
    delete spec.queue
    if (queue !== undefined) spec.queue = queue
    return this.launch({ ...this.newRecord(spec), rerunOf: id })
  }

  /**
   * Prunes ended jobs by `policy`, each field defaulting to `requester.retention`'s (neither
   * given: refused, 400 INVALID_REQUEST).
   */
  prune(policy: RetentionPolicy): Promise<PruneReport> {
    const p = { ...this.init.retention, ...policy }
    if (p.maxAgeDays === undefined && p.keepLast === undefined)
      return Promise.reject(
        Object.assign(
          new DmsError(
            'INVALID_REQUEST',
            'body: give maxAgeDays or keepLast (or set requester.retention in the config)',
          ),
          { statusCode: 400 },
        ),
      )
    return this.retention.prune(p)
  }

  /** What the queues need of the jobs (dms/orchestrator/queues/queue-book.ts). */
  forQueues(): QueueJobs {
    const index = this.store.index
    return {
      onChange: (fn) => this.onChange(fn),
      ids: async (queue, state) => {
        const ids: string[] = []
        let position: string | undefined
        for (;;) {
          const page = await index.page({ queue, state, limit: 1000, position })
          ids.push(...page.ids)
          if (page.next === undefined) return ids
          position = decodeCursor(page.next)
        }
      },
      count: (queue, state) => index.count({ queue, state }),
      onRemoved: (fn) => this.retention.onRemoved(fn),
      cancel: (id) => this.cancel(id),
    }
  }

  /**
   * One bid round for `spec` without locking or contracting: the bids that came back (ranked) and
   * the declines, every bid released at once; nothing stored (quote.ts).
   */
  quote(spec: JobSpec, signal: AbortSignal = new AbortController().signal): Promise<Quote> {
    return runQuote(spec, this.parts(), signal)
  }

  /**
   * Cancels a job: its machine goes to `cancelling`, which stops the provider's run and terminates
   * the contract with REQUESTER_CANCELLED (the time used is paid), then to `cancelled`.
   * Resolves with the job's state once the cancel is accepted.
   */
  async cancel(id: JobId): Promise<StoredJob> {
    const stored = await this.store.get(id)
    if (stored === undefined) throw new JobNotFoundError(id)
    const live = this.running.get(id)
    if (FINAL_STATES.includes(stored.state) || live === undefined) throw new JobEndedError(id, stored.state)
    live.machine.send({ type: 'CANCEL' })
    const snap = live.machine.getSnapshot()
    return { state: snap.value, record: snap.context }
  }

  /** What every job (and quote) of this requester shares. */
  private parts() {
    return {
      ...this.c,
      audience: this.audience,
      capacity: this.capacity,
      admission: this.admission,
      funds: this.funds,
      reliability: (peer: string) => this.records.reliability(peer),
      config: this.cfg,
    }
  }

  private launch(record: JobRecord, restore?: { snapshot: unknown; job: StoredJob }): Promise<StoredJob> {
    const snapshot = restore?.snapshot
    const { id } = record
    const job = createRunningJob(record, snapshot, {
      ...this.parts(),
      contractDb: this.init.contractDb,
      written: (jobId) => this.store.written(jobId),
      onUpdate: (jobId, u) => this.updateListeners.forEach((fn) => fn(jobId, u)),
      onLog: (jobId, l) => this.logListeners.forEach((fn) => fn(jobId, l)),
    })
    this.running.set(id, job)
    return this.store.start(id, job.machine, { restored: restore?.job, onDone: () => this.finish(id) })
  }

  /** A job's machine reached a final state (and it is stored): it leaves the registry. */
  private async finish(id: JobId): Promise<void> {
    const r = this.running.get(id)
    if (r === undefined) return
    this.running.delete(id)
    r.actor.stop()
    const snap = r.machine.getSnapshot()
    this.c.log.info({ jobId: id, state: snap.value, error: snap.context.error }, 'job finished')
    // The provider record used to rank future bids: faults dropped, and who completed.
    await this.records.recordOutcome(snap.value, snap.context)
  }
}
