/**
 * The requester role: takes posted jobs through the market to settlement, one xstate job machine
 * (job-machine.ts) and one actor (inbox `job/<id>`, job-inbox.ts) per job. This file keeps the
 * registry of running jobs and their lifecycle; the steps are in steps/, the stored jobs in
 * job-store.ts, the provider records in provider-records.ts, bid admission in bid-admission.ts.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { DmsError } from '../../actors/errors.js'
import type { KeyPair } from '../../actors/identity.js'
import type { ActorSystem } from '../../actors/system.js'
import type { Transport } from '../../actors/transport.js'
import type { BlobService } from '../blobs/service.js'
import type { JobLog, JobUpdate } from '../protocol/messages.js'
import type { Repo, Db } from '../store/db.js'
import { BidAdmission } from './bid-admission.js'
import { BidAudience } from './bid-audience.js'
import { jobConfigOf, type JobConfig, type OrchestratorInit } from './config.js'
import { resolveInputs } from './data-plane.js'
import type { JobId, JobRecord } from './job-record.js'
import type { JobSpec } from './job-spec.js'
import { FINAL_STATES, JobStore, type StoredJob } from './job-store.js'
import { ProviderRecords, type ProviderRecord } from './provider-records.js'
import { createRunningJob, type RunningJob } from './running-job.js'
import type { Approvals } from './steps/deps.js'

export { FINAL_STATES, type OrchestratorInit, type StoredJob }

export interface OrchestratorComponents {
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

export class JobNotFoundError extends DmsError {
  constructor(id: string) {
    super('JOB_NOT_FOUND', `no job ${id}`)
  }
}
export class JobEndedError extends DmsError {
  constructor(id: string, state: string) {
    super('JOB_ENDED', `job ${id} already ended: ${state}`)
  }
}

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
  private readonly running = new Map<JobId, RunningJob>()
  private readonly updateListeners = new Set<(jobId: JobId, update: JobUpdate) => void>()
  private readonly logListeners = new Set<(jobId: JobId, log: JobLog) => void>()
  private readonly cfg: JobConfig

  constructor(
    private readonly c: OrchestratorComponents,
    private readonly init: OrchestratorInit,
  ) {
    this.store = new JobStore(c)
    this.jobs = this.store.repo
    this.records = new ProviderRecords(c.db)
    this.providers = this.records.repo
    this.cfg = jobConfigOf(init)
    this.audience = new BidAudience({ silentAfter: init.bidSilentAfter, stragglerMs: init.bidStragglerMs })
    this.admission = new BidAdmission(c, init.contractDb.peer)
    this.bidsIgnored = this.admission.bidsIgnored
    this.declinesIgnored = this.admission.declinesIgnored
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

  /** Called with each progress update a job's provider sends (live, before it is persisted). */
  onUpdate(fn: (jobId: JobId, update: JobUpdate) => void): () => void {
    this.updateListeners.add(fn)
    return () => this.updateListeners.delete(fn)
  }

  /** The live output received so far of a running job (undefined when it is not running here). */
  liveLogs(id: JobId): { stdout: string; stderr: string; truncated: boolean } | undefined {
    return this.running.get(id)?.session.logs()
  }

  /**
   * Restores every job an earlier process left in a non-final state from its persisted snapshot.
   * The step of the state it was in runs again (xstate restarts an active promise actor), and its
   * deadlines are computed from the record (absolute times), so they are re-armed, not reset.
   */
  async start(): Promise<number> {
    let restored = 0
    for (const job of await this.store.values()) {
      if (FINAL_STATES.includes(job.state) || job.snapshot === undefined) continue
      if (this.running.has(job.record.id)) continue
      await this.launch(job.record, { ...(job.snapshot as object), context: job.record })
      restored++
    }
    if (restored > 0) this.c.log.info({ restored }, 'jobs restored after restart')
    return restored
  }

  stop(): void {
    for (const r of this.running.values()) {
      r.machine.stop()
      r.actor.stop()
    }
    this.running.clear()
  }

  async get(id: JobId): Promise<StoredJob | undefined> {
    const stored = await this.store.get(id)
    const live = this.running.get(id)
    if (stored !== undefined && live !== undefined) stored.record.updates = [...live.session.updates]
    return stored
  }

  list(): Promise<StoredJob[]> {
    return this.store.values()
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
    const spec: JobSpec = { ...parsed, inputs }
    if (inputs.length === 0) delete spec.inputs
    return this.launch({
      id: opts.id ?? randomUUID(),
      spec,
      createdAt: this.c.clock.now(),
      history: [],
      bids: [],
      declines: [],
      tried: [],
      updates: [],
    })
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

  private launch(record: JobRecord, snapshot?: unknown): Promise<StoredJob> {
    const { id } = record
    const job = createRunningJob(record, snapshot, {
      ...this.c,
      audience: this.audience,
      admission: this.admission,
      reliability: (peer) => this.records.reliability(peer),
      contractDb: this.init.contractDb,
      config: this.cfg,
      onUpdate: (jobId, u) => this.updateListeners.forEach((fn) => fn(jobId, u)),
      onLog: (jobId, l) => this.logListeners.forEach((fn) => fn(jobId, l)),
    })
    this.running.set(id, job)
    const restored = snapshot !== undefined
    return this.store.start(id, job.machine, { restored, onDone: () => this.finish(id) })
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
