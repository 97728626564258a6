/**
 * The requester's stored jobs: one record per job (sublevel `jobs`), written on every transition
 * of its machine, in the order the transitions happened, and the change listeners told after each
 * write. Spec: specs/state-machines.md ("Persistence").
 *
 * What is stored: the job's state, its record (the machine's context) and, while the job is not
 * final, the machine's persisted snapshot without its context and without the copies of it its
 * steps hold as their input (job-snapshot.ts: the record is stored once). A final job is never
 * restored, so it keeps no snapshot.
 */
import { STORES } from '../store/tables.js'
import type { Logger } from 'pino'
import type { Actor as XActor } from 'xstate'
import { SerialQueue } from '../../actors/serial.js'
import { DmsError } from '../../actors/errors.js'
import { Repo, type Db } from '../store/db.js'
import { JobIndex, type JobQuery } from './job-index.js'
import { persistedWithoutContext, storedSnapshot } from './job-snapshot.js'
import type { createJobMachine } from './job-machine.js'
import type { LiveUsage } from '../protocol/messages.js'
import type { JobId, JobRecord, JobState } from './job-record.js'

/** A job as stored and shown: the machine's context plus its current state. */
export interface StoredJob {
  state: JobState
  record: JobRecord
  /** The machine's persisted snapshot, restored by `start` after a restart. */
  snapshot?: unknown
  /** Shown while the job runs (Orchestrator.get): its provider's last usage report; never stored. */
  liveUsage?: LiveUsage & { at: number }
}

/** Job states a machine never leaves. */
export const FINAL_STATES: JobState[] = ['completed', 'failed', 'cancelled']

/** A running job machine (xstate actor). */
export type JobMachineActor = XActor<ReturnType<typeof createJobMachine>>

export interface JobStoreComponents {
  db: Db
  log: Logger
}

export class JobStore {
  readonly repo: Repo<StoredJob>
  /** The listing indexes, written in the same batch as each record (job-index.ts). */
  readonly index: JobIndex
  private readonly listeners = new Set<(job: StoredJob) => void>()
  /** The write queue of each job running here (its transitions, stored one at a time). */
  private readonly writing = new Map<JobId, SerialQueue>()
  /** Jobs running here whose last write failed, with why. */
  private readonly unwritten = new Map<JobId, unknown>()

  constructor(private readonly c: JobStoreComponents) {
    this.repo = new Repo(c.db, STORES.jobs.name)
    this.index = new JobIndex(c.db)
  }

  /** Indexes the jobs of a store written before the index (once; see JobIndex.migrate). */
  async migrate(): Promise<number> {
    const values = this.repo.sub.values()
    return this.index.migrate(
      (async function* () {
        for await (const v of values) yield JSON.parse(v) as StoredJob
      })(),
    )
  }

  /** One page of stored jobs, newest first (ids from the index, then each record). */
  async page(
    q: Omit<JobQuery, 'cursor'> & { position?: string },
  ): Promise<{ jobs: StoredJob[]; next?: string }> {
    const { ids, next } = await this.index.page(q)
    const jobs: StoredJob[] = []
    for (const id of ids) {
      const j = await this.get(id)
      if (j !== undefined) jobs.push(j)
    }
    return { jobs, ...(next !== undefined ? { next } : {}) }
  }

  /**
   * Stores `job` (its state moved from `prev`, absent for a new job) with its index keys, in one
   * atomic batch.
   */
  async write(job: StoredJob, prev: StoredJob | undefined): Promise<void> {
    await this.c.db.batch([this.repo.putOp(job.record.id, job), ...this.index.ops(prev, job)])
  }

  /** Deletes a final job and its index keys in one batch (retention). */
  async remove(job: StoredJob): Promise<void> {
    await this.c.db.batch([this.repo.delOp(job.record.id), ...this.index.ops(job, undefined)])
  }

  /**
   * Resolves once every transition job `id` made so far is stored (at once for a job not running
   * here); rejects JOB_NOT_STORED when the last of them could not be written (a full disk). A step
   * waits on it before a message whose effect a restore must find: see steps/close-contract.ts.
   */
  async written(id: JobId): Promise<void> {
    await this.writing.get(id)?.idle()
    const err = this.unwritten.get(id)
    if (err !== undefined)
      throw new DmsError(
        'JOB_NOT_STORED',
        `job ${id} could not be stored (${err instanceof Error ? err.message : 'write failed'}): nothing more is sent for it`,
      )
  }

  /** Calls `fn` with every persisted change of any job, after its write; returns the unsubscribe. */
  onChange(fn: (job: StoredJob) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  get(id: JobId): Promise<StoredJob | undefined> {
    return this.repo.get(id)
  }

  values(): Promise<StoredJob[]> {
    return this.repo.values()
  }

  /**
   * Starts `machine` with every transition persisted: subscribed first, so none is missed, and
   * written one at a time in order (xstate emits synchronously, so the writes queue). After the
   * final state's write, `onDone` runs. Resolves with the job once it is stored: at its first
   * write, or at once for a machine `restored` from a stored snapshot, which emits nothing until
   * its next transition (it is stored already).
   */
  start(
    id: JobId,
    machine: JobMachineActor,
    opts: { restored?: StoredJob; onDone: () => Promise<void> },
  ): Promise<StoredJob> {
    let first = true
    let prev = opts.restored
    let resolveStored!: (j: StoredJob) => void
    const stored = new Promise<StoredJob>((r) => (resolveStored = r))
    const writes = new SerialQueue()
    this.writing.set(id, writes)
    machine.subscribe((snap) => {
      const done = snap.status === 'done'
      const job: StoredJob = {
        state: snap.value,
        record: snap.context,
        ...(done ? {} : { snapshot: storedSnapshot(persistedWithoutContext(machine, snap), snap.context) }),
      }
      writes
        .run(async () => {
          try {
            await this.write(job, prev)
            this.unwritten.delete(id)
          } catch (err) {
            this.unwritten.set(id, err)
            throw err
          }
          prev = job
          for (const l of this.listeners) l(job)
          if (first) {
            first = false
            resolveStored(job)
          }
          if (done) {
            this.writing.delete(id)
            this.unwritten.delete(id)
            await opts.onDone()
          }
        })
        .catch((err: unknown) => this.c.log.error({ err, jobId: id }, 'job not persisted'))
    })
    machine.start()
    if (opts.restored !== undefined && first) {
      first = false
      const snap = machine.getSnapshot()
      resolveStored({ state: snap.value, record: snap.context })
    }
    return stored
  }
}
