/**
 * The actions posted on this node and their results (specs/functions.md, "Actions", "Result
 * cache"). Each action is matched to a registered worker and runs as an ordinary market job (bid,
 * contract, escrow, receipt) through a small jobs interface; the record keeps the action's jobs by
 * id (`STORES.actions`). An action whose last job completed with a verified receipt and outputs
 * and a settled contract is a cache hit: posting it again answers that result and posts nothing.
 * One whose job is still live is joined, not posted twice.
 */
import type { Clock } from '../../actors/clock.js'
import type { JobRecord } from '../orchestrator/job-record.js'
import { InvalidJobSpecError, parseJobSpec } from '../orchestrator/job-spec.js'
import { Repo, type Db } from '../store/db.js'
import { STORES } from '../store/tables.js'
import { actionIdOf, parseActionBatch, type ActionDescriptor, type ActionId } from './action.js'
import { ActionNotFoundError, InvalidActionError, NoWorkerError } from './errors.js'
import { actionJobSpec } from './file-mode.js'
import type { WorkerBook } from './worker-book.js'
import type { WorkerId } from './worker.js'
import type { ActionCounts, ActionHistoryEntry, ActionRecord, ActionState, ActionView } from './views.js'

/** The jobs the actions run as: the requester's, posted as a REST job spec would be. */
export interface ActionJobs {
  /** Checks `body` as a job spec and posts it (errors as `POST /v1/jobs`'s). */
  post(body: unknown): Promise<{ state: string; record: Pick<JobRecord, 'id'> }>
  get(id: string): Promise<ActionJobView | undefined>
}

/** What an action reads of its job. */
export interface ActionJobView {
  state: string
  record: Pick<JobRecord, 'id' | 'result' | 'verification' | 'settlement' | 'error'> &
    Partial<Pick<JobRecord, 'history'>>
}

/** Most of an action's jobs whose states `get` shows in its history (the newest). */
export const HISTORY_JOBS = 20

const FINAL = new Set(['completed', 'failed', 'cancelled'])

/** A job's result is one a later post may answer with: completed, checked, paid. */
export function verifiedResult(j: ActionJobView | undefined): boolean {
  const v = j?.record.verification
  return (
    j?.state === 'completed' &&
    v?.outputsHashOk === true &&
    v.receiptSignatureOk === true &&
    j.record.result !== undefined &&
    j.record.settlement !== undefined
  )
}

export class ActionBook {
  private readonly repo: Repo<ActionRecord>
  /** One post at a time per action id: a batch that repeats an action joins its first job. */
  private readonly busy = new Map<ActionId, Promise<unknown>>()
  readonly counts: ActionCounts = { hits: 0, misses: 0, joined: 0 }

  constructor(
    private readonly c: {
      db: Db
      clock: Pick<Clock, 'now'>
      workers: Pick<WorkerBook, 'match'>
      jobs: ActionJobs
      blobs: { size(sha256: string): Promise<number | undefined> }
    },
  ) {
    this.repo = new Repo(c.db, STORES.actions.name)
  }

  /**
   * Checks `body` (InvalidActionError), matches every action to a worker (NoWorkerError) and checks
   * every blob it names is here with its size, before anything is posted; then posts each action
   * in order: a cache hit or a live job answers without a new job.
   */
  async post(body: unknown): Promise<ActionView[]> {
    const batch = parseActionBatch(body)
    const matched = await Promise.all(
      batch.actions.map(async (a, i) => {
        const w = this.c.workers.match(a.function, a.version, a.buildSystemVersion)
        if (w === undefined)
          throw new NoWorkerError(`actions.${i}`, a.function, a.version, a.buildSystemVersion)
        const refs = [
          ...a.inputs.map((r, j) => ({ r, field: `actions.${i}.inputs.${j}` })),
          ...(a.attachments ?? []).map((r, j) => ({ r, field: `actions.${i}.attachments.${j}` })),
        ]
        for (const { r, field } of refs) {
          const size = await this.c.blobs.size(r.sha256)
          if (size === undefined)
            throw new InvalidActionError(
              field,
              `blob ${r.sha256} is not on this node: upload it with PUT /v1/blobs`,
            )
          if (size !== r.size)
            throw new InvalidActionError(`${field}.size`, `blob ${r.sha256} holds ${size} bytes`)
        }
        return { action: a, worker: w }
      }),
    )
    const opts = { maxPrice: batch.maxPrice, queue: batch.queue, cache: batch.cache ?? true }
    // Each job spec checked before the first is posted: a batch is refused whole or not at all.
    const jobs = matched.map(({ action, worker }, i) => {
      const id = actionIdOf(action)
      const spec = actionJobSpec(worker.descriptor, action, id, opts)
      try {
        parseJobSpec(spec, this.c.clock.now())
      } catch (err) {
        if (err instanceof InvalidJobSpecError)
          throw new InvalidActionError(`actions.${i}`, `its job would be refused: ${err.message}`)
        throw err
      }
      return { id, action, workerId: worker.id, spec }
    })
    const out: ActionView[] = []
    for (const j of jobs)
      out.push(await this.serial(j.id, () => this.postOne(j.id, j.action, j.workerId, j.spec, opts.cache)))
    return out
  }

  async get(id: ActionId): Promise<ActionView> {
    const r = /^[0-9a-f]{64}$/.test(id) ? await this.repo.get(id) : undefined
    if (r === undefined) throw new ActionNotFoundError(id)
    const jobs = await Promise.all(r.jobs.slice(-HISTORY_JOBS).map((j) => this.c.jobs.get(j)))
    const history: ActionHistoryEntry[] = [
      { state: 'posted', at: r.postedAt },
      ...jobs.flatMap((j) =>
        j === undefined
          ? []
          : (j.record.history ?? []).map((h) => ({ jobId: j.record.id, state: h.state, at: h.at })),
      ),
    ]
    return { ...this.view(r, jobs[jobs.length - 1]), history }
  }

  private async postOne(
    id: ActionId,
    action: ActionDescriptor,
    workerId: WorkerId,
    spec: Record<string, unknown>,
    cache: boolean,
  ): Promise<ActionView> {
    const known = await this.repo.get(id)
    const last = known === undefined ? undefined : await this.c.jobs.get(known.jobs[known.jobs.length - 1])
    if (known !== undefined && cache && verifiedResult(last)) {
      this.counts.hits++
      return { ...this.view(known, last), cached: true }
    }
    if (known !== undefined && last !== undefined && !FINAL.has(last.state)) {
      this.counts.joined++
      return this.view(known, last)
    }
    this.counts.misses++
    const postedAt = known?.postedAt ?? this.c.clock.now()
    const job = await this.c.jobs.post(spec)
    const record: ActionRecord = {
      v: 1,
      id,
      descriptor: action,
      worker: workerId,
      jobs: [...(known?.jobs ?? []), job.record.id],
      postedAt,
    }
    await this.repo.put(id, record)
    return this.view(record, { state: job.state, record: job.record })
  }

  private view(r: ActionRecord, job: ActionJobView | undefined): ActionView {
    const jobId = r.jobs[r.jobs.length - 1]
    const jobState = job?.state ?? 'unknown'
    // The job settles before it completes: a completed job whose checks failed is no result.
    const state: ActionState = verifiedResult(job)
      ? 'completed'
      : jobState === 'completed' || jobState === 'failed'
        ? 'failed'
        : jobState === 'cancelled'
          ? 'cancelled'
          : 'running'
    const error = job?.record.error
    return {
      id: r.id,
      state,
      function: r.descriptor.function,
      version: r.descriptor.version,
      buildSystemVersion: r.descriptor.buildSystemVersion,
      worker: r.worker,
      jobId,
      jobState,
      jobs: r.jobs,
      ...(state === 'completed'
        ? {
            outputs: (job?.record.result?.outputs ?? []).map((o) => ({
              path: o.path,
              sha256: o.sha256,
              size: o.size,
            })),
          }
        : {}),
      ...(error !== undefined ? { error: { code: error.code, message: error.message } } : {}),
    }
  }

  private async serial<T>(id: ActionId, fn: () => Promise<T>): Promise<T> {
    const before = this.busy.get(id) ?? Promise.resolve()
    const mine = before.then(fn, fn)
    this.busy.set(id, mine)
    try {
      return await mine
    } finally {
      if (this.busy.get(id) === mine) this.busy.delete(id)
    }
  }
}
