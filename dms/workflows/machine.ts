/**
 * The workflow machine (xstate v5). Spec: specs/state-machines.md ("Workflow machine").
 * running -> completed | failed, or running -> cancelling -> cancelled. Its context is the
 * per-task table (WorkflowRecord); the machine is pure: it decides which tasks start (when every
 * upstream completed) and which fail `UPSTREAM_FAILED`, and the runner (runner.ts) posts the
 * started tasks as ordinary jobs and feeds their state changes back as `JOB` events.
 */
import { createHash } from 'node:crypto'
import { assign, setup } from 'xstate'
import type { Clock } from '../../actors/clock.js'
import type { JobError } from '../orchestrator/job-record.js'
import {
  FINAL_TASK_STATES,
  type TaskRow,
  type WorkflowId,
  type WorkflowRecord,
  type WorkflowState,
} from './record.js'

export type WorkflowEvent =
  /** A unit's job changed state: its tasks (one, or a pod's) hear it at once, each with its error. */
  | { type: 'JOB'; tasks: string[]; jobState: string; errors?: Array<JobError | undefined> }
  /** A unit could not be posted (its inputs could not be prepared...). */
  | { type: 'START_FAILED'; tasks: string[]; error: JobError }
  | { type: 'CANCEL' }

/**
 * A task's job id, derived from the workflow id and the task name (a UUID-shaped sha256 prefix):
 * posting a task again after a restart finds the job it already posted instead of running it twice.
 */
export function jobIdOf(workflowId: WorkflowId, task: string): string {
  return uuidOf(`${workflowId}\0${task}`)
}

/**
 * A pod's one job id (specs/workflow.md, "Pods"), derived as a task's is; a task name has no NUL,
 * so it never meets a task's.
 */
export function podJobIdOf(workflowId: WorkflowId, pod: string): string {
  return uuidOf(`${workflowId}\0\0pod\0${pod}`)
}

/** The job id of the unit `task` runs in: its pod's, or its own. */
export function unitJobIdOf(workflowId: WorkflowId, task: { name: string; pod?: string }): string {
  return task.pod === undefined ? jobIdOf(workflowId, task.name) : podJobIdOf(workflowId, task.pod)
}

function uuidOf(key: string): string {
  const h = createHash('sha256').update(key).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

const JOB_FINAL: Record<string, TaskRow['state']> = {
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
}

const isFinal = (r: TaskRow) => FINAL_TASK_STATES.includes(r.state)

/**
 * Every task downstream of `name`, transitively, with the tasks of each one's pod: a pod starts as
 * one, so a task of it that can never start keeps its pod mates from starting. (`name`'s own pod
 * mates started with it and end with its pod's job.)
 */
function dependants(rec: WorkflowRecord, name: string): string[] {
  const out = new Set<string>()
  const tasks = rec.workflow.tasks
  const walk = (n: string, mates: boolean) => {
    const pod = mates ? tasks.find((t) => t.name === n)?.pod : undefined
    for (const t of tasks)
      if (
        t.name !== name &&
        !out.has(t.name) &&
        (t.after.includes(n) || (pod !== undefined && t.pod === pod))
      ) {
        out.add(t.name)
        walk(t.name, true)
      }
  }
  walk(name, false)
  return [...out]
}

export function createWorkflowMachine(clock: Pick<Clock, 'now'>) {
  /** `rows` with `name` ended as `state`; if it did not complete, its waiting dependants fail. */
  const end = (rec: WorkflowRecord, name: string, state: TaskRow['state'], error?: JobError) => {
    const rows = { ...rec.tasks }
    rows[name] = { ...rows[name], state, endedAt: clock.now(), ...(error !== undefined ? { error } : {}) }
    if (state !== 'completed')
      for (const d of dependants(rec, name))
        if (rows[d].state === 'waiting')
          rows[d] = {
            state: 'failed',
            endedAt: clock.now(),
            error: { code: 'UPSTREAM_FAILED', message: `upstream task ${name} ${state}` },
          }
    return rows
  }
  const allFinal = ({ context }: { context: WorkflowRecord }) => Object.values(context.tasks).every(isFinal)
  const stamp = (state: WorkflowState) => ({ type: 'stamp' as const, params: { state } })

  return setup({
    types: { context: {} as WorkflowRecord, events: {} as WorkflowEvent, input: {} as WorkflowRecord },
    actions: {
      stamp: assign({
        history: ({ context }, params: { state: WorkflowState }) => [
          ...context.history,
          { state: params.state, at: clock.now() },
        ],
      }),
      /** Starts every waiting task whose upstreams all completed (its job id is derived, not drawn). */
      startReady: assign({
        tasks: ({ context }) => {
          const rows = { ...context.tasks }
          const tasks = context.workflow.tasks
          for (const t of tasks) {
            // A pod starts as one: every task of it waiting, and all their upstreams completed.
            const unit = t.pod === undefined ? [t] : tasks.filter((m) => m.pod === t.pod)
            const ready = unit.every(
              (m) => rows[m.name].state === 'waiting' && m.after.every((u) => rows[u].state === 'completed'),
            )
            if (ready)
              for (const m of unit)
                rows[m.name] = { state: 'started', jobId: unitJobIdOf(context.id, m), startedAt: clock.now() }
          }
          return rows
        },
      }),
      onJob: assign({
        tasks: ({ context, event }) => {
          if (event.type !== 'JOB') return context.tasks
          let rows = context.tasks
          for (const task of event.tasks) {
            const row = rows[task]
            if (row === undefined || isFinal(row)) continue
            const final = JOB_FINAL[event.jobState]
            if (final === undefined) {
              rows = { ...rows, [task]: { ...row, jobState: event.jobState } }
              continue
            }
            rows = end({ ...context, tasks: rows }, task, final, event.errors?.[event.tasks.indexOf(task)])
            rows[task] = { ...rows[task], jobState: event.jobState }
          }
          return rows
        },
      }),
      onStartFailed: assign({
        tasks: ({ context, event }) => {
          if (event.type !== 'START_FAILED') return context.tasks
          let rows = context.tasks
          for (const task of event.tasks) {
            const row = rows[task]
            if (row === undefined || isFinal(row)) continue
            rows = end({ ...context, tasks: rows }, task, 'failed', event.error)
          }
          return rows
        },
      }),
      /** Cancelling: tasks not started never will be. */
      cancelWaiting: assign({
        tasks: ({ context }) => {
          const rows = { ...context.tasks }
          for (const [n, r] of Object.entries(rows))
            if (r.state === 'waiting') rows[n] = { state: 'cancelled', endedAt: clock.now() }
          return rows
        },
      }),
    },
    guards: {
      allFinal,
      allCompleted: ({ context }) => Object.values(context.tasks).every((r) => r.state === 'completed'),
    },
  }).createMachine({
    id: 'workflow',
    context: ({ input }) => input,
    initial: 'running',
    states: {
      running: {
        entry: ['startReady'],
        always: [
          { guard: 'allCompleted', target: 'completed' },
          { guard: 'allFinal', target: 'failed' },
        ],
        on: {
          JOB: { actions: ['onJob', 'startReady'] },
          START_FAILED: { actions: ['onStartFailed', 'startReady'] },
          CANCEL: { target: 'cancelling' },
        },
      },
      cancelling: {
        entry: [stamp('cancelling'), 'cancelWaiting'],
        always: { guard: 'allFinal', target: 'cancelled' },
        on: {
          JOB: { actions: ['onJob'] },
          START_FAILED: { actions: ['onStartFailed'] },
        },
      },
      completed: { type: 'final', entry: stamp('completed') },
      failed: { type: 'final', entry: stamp('failed') },
      cancelled: { type: 'final', entry: stamp('cancelled') },
    },
  })
}
