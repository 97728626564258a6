/**
 * The requester's workflows (specs/workflow.md): one workflow machine (machine.ts) per workflow,
 * persisted on every transition (sublevel `workflows`) and restored after a restart. Its tasks
 * run as ordinary jobs through a small port on the orchestrator (`WorkflowJobs`): the runner posts
 * each task the machine starts, under a job id derived from the workflow and the task (so a
 * restart never posts a task twice), and feeds every stored change of those jobs back to the
 * machine.
 */
import { STORES } from '../store/tables.js'
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Actor as XActor } from 'xstate'
import { createActor } from 'xstate'
import type { Clock } from '../../actors/clock.js'
import { codeOf, DmsError } from '../../actors/errors.js'
import { SerialQueue } from '../../actors/serial.js'
import type { BlobStore } from '../blobs/store.js'
import { sum } from '../contracts/money.js'
import type { JobRecord } from '../orchestrator/job-record.js'
import type { JobSpec } from '../orchestrator/job-spec.js'
import { Repo, type Db } from '../store/db.js'
import { parseWorkflow, type Workflow } from './document.js'
import { handedOn, handOff, releasedAtEnd } from './handoff.js'
import { storeTaskInputs } from './inputs.js'
import {
  BalanceUnknownError,
  InsufficientBalanceError,
  OutputsReleasedError,
  TaskNotFoundError,
  WorkflowEndedError,
  WorkflowNotFoundError,
} from './errors.js'
import { createWorkflowMachine } from './machine.js'
import { podJobSpec, taskError, taskFiles, unitsByJob } from './pod-job.js'
import { FINAL_WORKFLOW_STATES, type WorkflowId, type WorkflowRecord, type WorkflowState } from './record.js'

/** A job as the workflows see it. */
export interface WorkflowJob {
  state: string
  record: Pick<JobRecord, 'id' | 'error'> & Partial<Pick<JobRecord, 'result' | 'winner' | 'providerAddrs'>>
}

/** What the workflows need of the requester's orchestrator. */
export interface WorkflowJobs {
  /** Posts a task's job under `id`; if a job `id` exists already it is returned, not posted again. */
  post(spec: JobSpec, id: string): Promise<WorkflowJob>
  get(id: string): Promise<WorkflowJob | undefined>
  /** Asks a live job to stop (its contract pays the time used). */
  cancel(id: string): Promise<unknown>
  /** Every stored change of any job; returns the unsubscribe function. */
  onChange(fn: (job: WorkflowJob) => void): () => void
  /**
   * Fetches a completed job's outputs to this node, checked against its signed manifest (a no-op
   * when they are here); throws `OUTPUTS_NOT_READY` or `OUTPUTS_NOT_FETCHED`.
   */
  outputs(id: string): Promise<TaskOutputs>
  /**
   * Tells the provider of a job whose outputs stayed there that they are no longer needed, so it
   * deletes the archive: true once released (now or before), false when there was none.
   */
  release(id: string): Promise<boolean>
}

/** One task's outputs, fetched to this node: its job's manifest and archive. */
export interface TaskOutputs {
  jobId: string
  files: Array<{ path: string; sha256: string; size: number }>
  archive: { sha256: string; size: number } | null
}

/** A workflow as stored and shown. */
export interface StoredWorkflow {
  state: WorkflowState
  record: WorkflowRecord
  snapshot?: unknown
  /**
   * Set once the workflow ended: true when every archive left at a provider for its tasks was
   * released, false when the document keeps them (`keepOutputs`).
   */
  released?: boolean
}

export interface WorkflowRunnerComponents {
  db: Db
  clock: Pick<Clock, 'now'>
  log: Logger
  jobs: WorkflowJobs
  /** Where upstream output archives are (the requester's blob store). */
  blobs: BlobStore
  /** This requester's spendable balance at its contract-db (absent: not checked). */
  balance?: () => Promise<number>
}

export interface WorkflowRunnerInit {
  /** Most tasks in one workflow. @default 32 */
  maxTasks?: number
}

type WorkflowActor = XActor<ReturnType<typeof createWorkflowMachine>>

export class WorkflowRunner {
  readonly repo: Repo<StoredWorkflow>
  private readonly machine: ReturnType<typeof createWorkflowMachine>
  private readonly running = new Map<WorkflowId, WorkflowActor>()
  /** Job id -> its workflow and tasks (one, or a pod's), for the tasks of running workflows. */
  private readonly byJob = new Map<string, { wf: WorkflowId; tasks: string[] }>()
  /** Job ids posted (or found posted) by this process, and those it asked to cancel. */
  private readonly posted = new Set<string>()
  private readonly cancelSent = new Set<string>()
  private readonly listeners = new Set<(wf: StoredWorkflow) => void>()
  private unsubscribe?: () => void

  constructor(
    private readonly c: WorkflowRunnerComponents,
    private readonly init: WorkflowRunnerInit = {},
  ) {
    this.repo = new Repo(c.db, STORES.workflows.name)
    this.machine = createWorkflowMachine(c.clock)
  }

  /** Listens to jobs and restores every workflow an earlier process left running. */
  async start(): Promise<number> {
    this.unsubscribe ??= this.c.jobs.onChange((job) => this.onJob(job))
    let restored = 0
    for (const wf of await this.repo.values()) {
      // Ended before its archives were all released (a restart, a provider that did not answer).
      if (FINAL_WORKFLOW_STATES.includes(wf.state) && wf.released === undefined) void this.releaseArchives(wf)
      if (FINAL_WORKFLOW_STATES.includes(wf.state) || wf.snapshot === undefined) continue
      if (this.running.has(wf.record.id)) continue
      await this.launch(wf.record, { ...(wf.snapshot as object), context: wf.record })
      restored++
    }
    if (restored > 0) this.c.log.info({ restored }, 'workflows restored after restart')
    return restored
  }

  stop(): void {
    this.unsubscribe?.()
    this.unsubscribe = undefined
    for (const a of this.running.values()) a.stop()
    this.running.clear()
  }

  /** Called with every persisted change of any workflow. */
  onChange(fn: (wf: StoredWorkflow) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  get(id: WorkflowId): Promise<StoredWorkflow | undefined> {
    return this.repo.get(id)
  }

  list(): Promise<StoredWorkflow[]> {
    return this.repo.values()
  }

  /**
   * Checks `body` as a workflow document and the balance against its escrow plan, then starts it;
   * resolves once it is stored (its first tasks are being posted).
   */
  async post(body: unknown): Promise<StoredWorkflow> {
    const parsed = parseWorkflow(body, { maxTasks: this.init.maxTasks })
    const escrowPlan = sum(parsed.tasks.map((t) => t.job.maxPrice))
    if (this.c.balance !== undefined) {
      let balance: number
      try {
        balance = await this.c.balance()
      } catch (err) {
        throw new BalanceUnknownError(err)
      }
      if (balance < escrowPlan) throw new InsufficientBalanceError(escrowPlan, balance)
    }
    const workflow = await storeTaskInputs(this.c.blobs, parsed)
    return this.launch(recordOf(randomUUID(), workflow, escrowPlan, this.c.clock.now()))
  }

  /** Cancels every live task; tasks not started never start. */
  async cancel(id: WorkflowId): Promise<StoredWorkflow> {
    const stored = await this.repo.get(id)
    if (stored === undefined) throw new WorkflowNotFoundError(id)
    const actor = this.running.get(id)
    if (actor === undefined || FINAL_WORKFLOW_STATES.includes(stored.state))
      throw new WorkflowEndedError(id, stored.state)
    actor.send({ type: 'CANCEL' })
    const snap = actor.getSnapshot()
    return { state: snap.value, record: snap.context }
  }

  /**
   * Fetches one task's outputs to this node, even when they were left at its provider for the
   * tasks downstream (specs/workflow.md, "Outputs on demand"): the archive is checked against the
   * manifest its provider signed, then the job's outputs routes serve it.
   */
  async outputs(id: WorkflowId, task: string): Promise<TaskOutputs & { task: string; pod?: string }> {
    const stored = await this.repo.get(id)
    if (stored === undefined) throw new WorkflowNotFoundError(id)
    // Own names only: `constructor` fits the route's pattern and every object inherits it.
    const row = Object.hasOwn(stored.record.tasks, task) ? stored.record.tasks[task] : undefined
    if (row === undefined) throw new TaskNotFoundError(id, task)
    if (row.jobId === undefined || row.state !== 'completed')
      throw new DmsError(
        'OUTPUTS_NOT_READY',
        `task ${task} is ${row.state}: only a completed task's outputs can be fetched`,
      )
    // Released at the end (specs/workflow.md): said at once, not as the provider's "not shared".
    const archive = (await this.c.jobs.get(row.jobId))?.record.result?.archive
    if (
      releasedAtEnd(stored, row.jobId) &&
      archive !== undefined &&
      !(await this.c.blobs.has(archive.sha256))
    )
      throw new OutputsReleasedError(id, task, stored.state)
    const fetched = await this.c.jobs.outputs(row.jobId)
    // A pod's task: its subtree of the pod's archive (`<task>/...`, paths as the job's routes serve them).
    const pod = stored.record.workflow.tasks.find((t) => t.name === task)?.pod
    if (pod === undefined) return { task, ...fetched }
    return { task, pod, ...fetched, files: taskFiles(fetched.files, task) }
  }

  private launch(record: WorkflowRecord, snapshot?: unknown): Promise<StoredWorkflow> {
    const id = record.id
    const actor = createActor(this.machine, {
      input: record,
      ...(snapshot !== undefined ? { snapshot: snapshot as never } : {}),
    })
    this.running.set(id, actor)
    for (const [jobId, tasks] of unitsByJob(record)) this.byJob.set(jobId, { wf: id, tasks })
    const writes = new SerialQueue()
    let resolveStored!: (wf: StoredWorkflow) => void
    const stored = new Promise<StoredWorkflow>((r) => (resolveStored = r))
    const persist = (snap: ReturnType<WorkflowActor['getSnapshot']>) => {
      const done = snap.status === 'done'
      const wf: StoredWorkflow = {
        state: snap.value,
        record: snap.context,
        ...(done ? {} : { snapshot: { ...actor.getPersistedSnapshot(), context: undefined } }),
      }
      return writes
        .run(async () => {
          await this.repo.put(id, wf)
          for (const l of this.listeners) l(wf)
          resolveStored(wf)
          if (done) {
            this.finish(id)
            void this.releaseArchives(wf)
          } else this.reconcile(id, wf)
        })
        .catch((err: unknown) => this.c.log.error({ err, workflowId: id }, 'workflow not persisted'))
    }
    actor.subscribe((snap) => void persist(snap))
    actor.start()
    // A fresh machine's first state is emitted to no one (it starts before a subscriber can see
    // it), and a restored one emits nothing until its next transition: store and act on it now.
    void persist(actor.getSnapshot())
    return stored
  }

  /**
   * Posts every started unit (a task, or a pod's tasks) not yet posted; in `cancelling`, cancels
   * every live one (a pod's job once).
   */
  private reconcile(id: WorkflowId, wf: StoredWorkflow): void {
    const actor = this.running.get(id)
    if (actor === undefined) return
    for (const [jobId, tasks] of unitsByJob(wf.record)) {
      if (tasks.every((t) => wf.record.tasks[t].state !== 'started')) continue
      this.byJob.set(jobId, { wf: id, tasks })
      if (wf.state === 'cancelling') {
        if (this.cancelSent.has(jobId)) continue
        this.cancelSent.add(jobId)
        // Not found and not being posted: it never will be. Already ended: its end is the news.
        this.c.jobs.cancel(jobId).catch(async (err: unknown) => {
          if (codeOf(err) === 'JOB_NOT_FOUND' && !this.posted.has(jobId))
            actor.send({ type: 'JOB', tasks, jobState: 'cancelled' })
          const job = codeOf(err) === 'JOB_ENDED' ? await this.c.jobs.get(jobId) : undefined
          if (job !== undefined) this.sendJob(actor, tasks, job)
        })
        continue
      }
      if (this.posted.has(jobId)) continue
      this.posted.add(jobId)
      this.startUnit(actor, wf.record, tasks, jobId).catch((err: unknown) =>
        actor.send({
          type: 'START_FAILED',
          tasks,
          error: { code: codeOf(err), message: (err as Error).message },
        }),
      )
    }
  }

  /**
   * Posts a unit's job with its hand-off inputs (a pod's tasks merged into one job's members), or
   * catches up with the job posted before a restart.
   */
  private async startUnit(
    actor: WorkflowActor,
    rec: WorkflowRecord,
    names: string[],
    jobId: string,
  ): Promise<void> {
    const existing = await this.c.jobs.get(jobId)
    if (existing !== undefined) return this.sendJob(actor, names, existing)
    const tasks = names.map((n) => {
      const t = rec.workflow.tasks.find((x) => x.name === n)
      if (t === undefined) throw new DmsError('UNKNOWN_TASK', `no task ${n}`)
      return t
    })
    const members = []
    for (const t of tasks) {
      const inputs = [...(t.job.inputs ?? [])]
      for (const from of t.from) {
        const upId = rec.tasks[from.fromTask]?.jobId
        const up = upId === undefined ? undefined : await this.c.jobs.get(upId)
        const upTask = rec.workflow.tasks.find((x) => x.name === from.fromTask)
        // A pod's task wrote its outputs under `<task>/` of its pod's archive.
        inputs.push(...handOff(from, up?.record, upTask?.pod !== undefined ? from.fromTask : undefined))
      }
      members.push({ task: t, inputs })
    }
    // A task whose outputs are handed on keeps them at its provider, where its dependants fetch them.
    const spec: JobSpec =
      tasks[0].pod === undefined
        ? { ...tasks[0].job, ...(members[0].inputs.length > 0 ? { inputs: members[0].inputs } : {}) }
        : podJobSpec(tasks[0].pod, members)
    const job = await this.c.jobs.post(
      handedOn(rec.workflow, names) ? { ...spec, outputsStay: true } : spec,
      jobId,
    )
    // Cancelled while it was being posted: the cancel found no job, so it is sent now.
    if (actor.getSnapshot().value === 'cancelling') await this.c.jobs.cancel(jobId).catch(() => undefined)
    this.sendJob(actor, names, job)
  }

  /** A unit's job changed: its tasks (one, or a pod's) hear it in one event. */
  private sendJob(actor: WorkflowActor, tasks: string[], job: WorkflowJob): void {
    actor.send({ type: 'JOB', tasks, jobState: job.state, errors: tasks.map((t) => taskError(job, t)) })
  }

  private onJob(job: WorkflowJob): void {
    const owner = this.byJob.get(job.record.id)
    const actor = owner === undefined ? undefined : this.running.get(owner.wf)
    if (owner !== undefined && actor !== undefined) this.sendJob(actor, owner.tasks, job)
  }

  /**
   * Once a workflow ended no task can need its upstreams' archives: each provider that kept one for
   * the hand-offs is told to delete it (specs/workflow.md, "Archives released"), unless the
   * document keeps them (`keepOutputs`: recorded `released: false`). Recorded `released: true` once
   * every one is; else tried again at the next start.
   */
  private async releaseArchives(wf: StoredWorkflow): Promise<void> {
    const id = wf.record.id
    const keep = wf.record.workflow.keepOutputs === true
    let all = true
    for (const [jobId, tasks] of keep ? [] : unitsByJob(wf.record)) {
      try {
        await this.c.jobs.release(jobId)
      } catch (err) {
        all = false
        this.c.log.warn(
          { err, workflowId: id, task: tasks.join(',') },
          'output archive not released: tried again at the next start',
        )
      }
    }
    if (!all) return
    const done: StoredWorkflow = { ...wf, released: !keep }
    await this.repo.put(id, done)
    for (const l of this.listeners) l(done)
  }

  private finish(id: WorkflowId): void {
    const actor = this.running.get(id)
    if (actor === undefined) return
    this.running.delete(id)
    const snap = actor.getSnapshot()
    for (const row of Object.values(snap.context.tasks))
      if (row.jobId !== undefined) {
        this.byJob.delete(row.jobId)
        this.posted.delete(row.jobId)
        this.cancelSent.delete(row.jobId)
      }
    actor.stop()
    this.c.log.info({ workflowId: id, state: snap.value }, 'workflow finished')
  }
}

/** A new workflow's record: every task waiting. */
export function recordOf(
  id: WorkflowId,
  workflow: Workflow,
  escrowPlan: number,
  now: number,
): WorkflowRecord {
  return {
    id,
    workflow,
    createdAt: now,
    escrowPlan,
    tasks: Object.fromEntries(workflow.tasks.map((t) => [t.name, { state: 'waiting' as const }])),
    history: [{ state: 'running', at: now }],
  }
}
