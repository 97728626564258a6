/**
 * The requester's queues (batches of jobs): created, drained, cancelled and expired here, stored in
 * sublevel `queues`. Counts follow each stored change of a job (the job store's change listener),
 * never a scan; at start they are read once from the job index's per-queue keys. Idle expiry runs
 * on the injected Clock. Spec: specs/queues.md.
 */
import { STORES } from '../../store/tables.js'
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Clock } from '../../../actors/clock.js'
import { isCode } from '../../../actors/errors.js'
import { SerialQueue } from '../../../actors/serial.js'
import { Repo, type Db } from '../../store/db.js'
import type { JobState } from '../job-record.js'
import type { JobSpec } from '../job-spec.js'
import { FINAL_STATES, type StoredJob } from '../job-store.js'
import {
  nextQueueState,
  QueueNotFoundError,
  QueueStateError,
  type QueueEvent,
  type QueueRecord,
} from './queue-machine.js'

/** What the book needs of the jobs: their changes, the index, and cancel. */
export interface QueueJobs {
  onChange(fn: (job: StoredJob) => void): () => void
  /** Every id of a queue's jobs in `state` (from the index). */
  ids(queue: string, state: JobState): Promise<string[]>
  /** How many of a queue's jobs are in `state` (from the index). */
  count(queue: string, state: JobState): Promise<number>
  cancel(id: string): Promise<unknown>
  /** Each ended job pruned by retention (its queue's count drops). */
  onRemoved?(fn: (job: StoredJob) => void): () => void
}

export interface QueueBookComponents {
  db: Db
  clock: Clock
  log: Logger
  jobs: QueueJobs
}

export interface NewQueue {
  tag: string
  maxRetries?: number
  idleExpirySeconds?: number
}

/** Default idle expiry of a queue: one day. */
export const DEFAULT_QUEUE_IDLE_SECONDS = 86_400

const LIVE_STATES: JobState[] = [
  'bidding',
  'selecting',
  'requesting',
  'contracting',
  'invoking',
  'running',
  'verifying',
  'settling',
  'cancelling',
  'retrying',
]

export class QueueBook {
  readonly repo: Repo<QueueRecord>
  private readonly queues = new Map<string, QueueRecord>()
  /** The live (not final) jobs of each queue. */
  private readonly live = new Map<string, Set<string>>()
  private readonly timers = new Map<string, unknown>()
  private readonly writes = new SerialQueue()
  private offs: Array<() => void> = []

  constructor(
    private readonly c: QueueBookComponents,
    private readonly init: { idleExpirySeconds?: number } = {},
  ) {
    this.repo = new Repo(c.db, STORES.queues.name)
  }

  /** Loads the stored queues and their counts, then follows the jobs. */
  async start(): Promise<void> {
    for (const q of await this.repo.values()) {
      const live = new Set<string>()
      for (const s of LIVE_STATES) for (const id of await this.c.jobs.ids(q.id, s)) live.add(id)
      q.counts = {
        active: live.size,
        completed: await this.c.jobs.count(q.id, 'completed'),
        failed: await this.c.jobs.count(q.id, 'failed'),
        cancelled: await this.c.jobs.count(q.id, 'cancelled'),
      }
      this.queues.set(q.id, q)
      this.live.set(q.id, live)
    }
    this.offs.push(this.c.jobs.onChange((job) => this.onJob(job)))
    if (this.c.jobs.onRemoved !== undefined)
      this.offs.push(this.c.jobs.onRemoved((job) => this.onPruned(job)))
    for (const q of this.queues.values()) {
      // What a restart interrupted: a drain whose last job ended, a cancel not yet told to every job.
      if (q.state === 'draining' && q.counts.active === 0) this.move(q, 'drained')
      if (q.state === 'cancelled') this.cancelLive(q)
      this.arm(q)
    }
  }

  stop(): void {
    for (const off of this.offs.splice(0)) off()
    for (const t of this.timers.values()) this.c.clock.clearTimeout(t)
    this.timers.clear()
  }

  /** Resolves once every queue change so far is stored. */
  idle(): Promise<void> {
    return this.writes.idle()
  }

  async create(req: NewQueue): Promise<QueueRecord> {
    const now = this.c.clock.now()
    const q: QueueRecord = {
      id: randomUUID(),
      tag: req.tag,
      ...(req.maxRetries !== undefined ? { maxRetries: req.maxRetries } : {}),
      idleExpirySeconds: req.idleExpirySeconds ?? this.init.idleExpirySeconds ?? DEFAULT_QUEUE_IDLE_SECONDS,
      state: 'active',
      createdAt: now,
      lastActivityAt: now,
      history: [{ state: 'active', at: now }],
      counts: { active: 0, completed: 0, failed: 0, cancelled: 0 },
    }
    this.queues.set(q.id, q)
    this.live.set(q.id, new Set())
    await this.persist(q)
    this.arm(q)
    return this.view(q)
  }

  get(id: string): QueueRecord | undefined {
    const q = this.queues.get(id)
    return q === undefined ? undefined : this.view(q)
  }

  /** Every queue, newest first. */
  list(): QueueRecord[] {
    return [...this.queues.values()].sort((a, b) => b.createdAt - a.createdAt).map((q) => this.view(q))
  }

  /**
   * Admits a job posted into a queue (`spec.queue`; none: nothing to do): throws unless the queue
   * is active (404, 409); its `maxRetries` is the job's `retries` when the job gave none.
   */
  admitJob(spec: JobSpec, retriesGiven: boolean): void {
    if (spec.queue === undefined) return
    const q = this.admit(spec.queue)
    if (q.maxRetries !== undefined && !retriesGiven) spec.retries = q.maxRetries
  }

  /** The queue a rerun of a job of queue `id` joins: that queue while it is active, else none. */
  rerunInto(id: string | undefined): string | undefined {
    return id !== undefined && this.queues.get(id)?.state === 'active' ? id : undefined
  }

  /** The queue a job is about to join; throws unless it is active (404, 409). */
  admit(id: string): QueueRecord {
    const q = this.queues.get(id)
    if (q === undefined) throw new QueueNotFoundError(id)
    if (q.state !== 'active') throw new QueueStateError(id, q.state, 'take new jobs')
    return this.view(q)
  }

  /** Refuses new jobs; the queue is `drained` once its last live job ends (at once if none). */
  async drain(id: string): Promise<QueueRecord> {
    const q = this.must(id)
    this.move(q, 'drain', 'drain')
    if (q.counts.active === 0) this.move(q, 'drained')
    await this.writes.idle()
    return this.view(q)
  }

  /** Cancels the queue and every live job of it (each ends `cancelled`). */
  async cancel(id: string): Promise<QueueRecord> {
    const q = this.must(id)
    this.move(q, 'cancel', 'be cancelled')
    this.cancelLive(q)
    await this.writes.idle()
    return this.view(q)
  }

  private must(id: string): QueueRecord {
    const q = this.queues.get(id)
    if (q === undefined) throw new QueueNotFoundError(id)
    return q
  }

  private view(q: QueueRecord): QueueRecord {
    return { ...q, counts: { ...q.counts }, history: [...q.history] }
  }

  /** Takes `event` (throws QueueStateError naming `what` when refused); stores the queue. */
  private move(q: QueueRecord, event: QueueEvent, what?: string): void {
    const next = nextQueueState(q.state, event)
    if (next === undefined) {
      if (what !== undefined) throw new QueueStateError(q.id, q.state, what)
      return
    }
    q.state = next
    q.history.push({ state: next, at: this.c.clock.now() })
    this.c.log.info({ queue: q.id, state: next }, 'queue state')
    this.arm(q)
    void this.persist(q)
  }

  private onJob(job: StoredJob): void {
    const qid = job.record.spec.queue
    const q = qid === undefined ? undefined : this.queues.get(qid)
    if (q === undefined) return
    const live = this.live.get(q.id) as Set<string>
    const id = job.record.id
    const final = FINAL_STATES.includes(job.state)
    if (!final && !live.has(id)) {
      live.add(id)
      q.counts.active++
      q.lastActivityAt = this.c.clock.now()
      // Posted while the queue was being cancelled: it goes the way of the others.
      if (q.state === 'cancelled') this.cancelOne(q, id)
    } else if (final && live.has(id)) {
      live.delete(id)
      q.counts.active--
      q.counts[job.state as 'completed' | 'failed' | 'cancelled']++
      q.lastActivityAt = this.c.clock.now()
      if (q.state === 'draining' && live.size === 0) this.move(q, 'drained')
    } else return
    this.arm(q)
    void this.persist(q)
  }

  /** Counts are of the stored jobs: an ended job pruned by retention leaves them. */
  private onPruned(job: StoredJob): void {
    const q = job.record.spec.queue === undefined ? undefined : this.queues.get(job.record.spec.queue)
    if (q === undefined || !FINAL_STATES.includes(job.state)) return
    const k = job.state as 'completed' | 'failed' | 'cancelled'
    q.counts[k] = Math.max(0, q.counts[k] - 1)
    void this.persist(q)
  }

  private cancelLive(q: QueueRecord): void {
    for (const id of this.live.get(q.id) ?? []) this.cancelOne(q, id)
  }

  private cancelOne(q: QueueRecord, id: string): void {
    this.c.jobs.cancel(id).catch((err: unknown) => {
      // Ended meanwhile (or already cancelling): nothing left to cancel.
      if (!isCode(err, 'JOB_ENDED')) this.c.log.warn({ err, queue: q.id, jobId: id }, 'queue: cancel failed')
    })
  }

  /** Idle expiry: armed while an active queue has no live job, from its last activity. */
  private arm(q: QueueRecord): void {
    const t = this.timers.get(q.id)
    if (t !== undefined) this.c.clock.clearTimeout(t)
    this.timers.delete(q.id)
    if (q.state !== 'active' || q.counts.active > 0) return
    const due = q.lastActivityAt + q.idleExpirySeconds * 1000 - this.c.clock.now()
    this.timers.set(
      q.id,
      this.c.clock.setTimeout(() => {
        this.timers.delete(q.id)
        if (q.state === 'active' && q.counts.active === 0) this.move(q, 'expire')
      }, due),
    )
  }

  private persist(q: QueueRecord): Promise<void> {
    return this.writes
      .run(() => this.repo.put(q.id, this.view(q)))
      .catch((err: unknown) => this.c.log.error({ err, queue: q.id }, 'queue not stored'))
  }
}
