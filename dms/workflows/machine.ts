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
  /** A task's job changed state (`final` when it will not change again). */
  | { type: 'JOB'; task: string; jobState: string; error?: JobError }
  /** A task could not be posted (its inputs could not be prepared...). */
  | { type: 'START_FAILED'; task: string; error: JobError }
  | { type: 'CANCEL' }

/**
 * A task's job id, derived from the workflow id and the task name (a UUID-shaped sha256 prefix):
 * posting a task again after a restart finds the job it already posted instead of running it twice.
 */
export function jobIdOf(workflowId: WorkflowId, task: string): string {
  const h = createHash('sha256').update(`${workflowId}\0${task}`).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

const JOB_FINAL: Record<string, TaskRow['state']> = {
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
}

const isFinal = (r: TaskRow) => FINAL_TASK_STATES.includes(r.state)

/** Every task downstream of `name`, transitively. */
function dependants(rec: WorkflowRecord, name: string): string[] {
  const out = new Set<string>()
  const walk = (n: string) => {
    for (const t of rec.workflow.tasks)
      if (t.after.includes(n) && !out.has(t.name)) {
        out.add(t.name)
        walk(t.name)
      }
  }
  walk(name)
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
          for (const t of context.workflow.tasks)
            if (rows[t.name].state === 'waiting' && t.after.every((u) => rows[u].state === 'completed'))
              rows[t.name] = { state: 'started', jobId: jobIdOf(context.id, t.name), startedAt: clock.now() }
          return rows
        },
      }),
      onJob: assign({
        tasks: ({ context, event }) => {
          if (event.type !== 'JOB') return context.tasks
          const row = context.tasks[event.task]
          if (row === undefined || isFinal(row)) return context.tasks
          const final = JOB_FINAL[event.jobState]
          if (final === undefined)
            return { ...context.tasks, [event.task]: { ...row, jobState: event.jobState } }
          const rows = end(context, event.task, final, event.error)
          rows[event.task] = { ...rows[event.task], jobState: event.jobState }
          return rows
        },
      }),
      onStartFailed: assign({
        tasks: ({ context, event }) => {
          if (event.type !== 'START_FAILED') return context.tasks
          const row = context.tasks[event.task]
          if (row === undefined || isFinal(row)) return context.tasks
          return end(context, event.task, 'failed', event.error)
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
