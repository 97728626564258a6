/** What the requester keeps of one workflow: the workflow machine's context, persisted. */
import type { JobError } from '../orchestrator/job-record.js'
import type { Workflow } from './document.js'

export type WorkflowId = string

export type WorkflowState = 'running' | 'cancelling' | 'completed' | 'failed' | 'cancelled'

/**
 * A task's state: `waiting` for its upstreams, `started` (its job exists, or is being posted, under
 * `jobId`), then final: `completed`, `failed` (its job failed, or `UPSTREAM_FAILED`), `cancelled`.
 */
export type TaskState = 'waiting' | 'started' | 'completed' | 'failed' | 'cancelled'

export const FINAL_TASK_STATES: readonly TaskState[] = ['completed', 'failed', 'cancelled']
export const FINAL_WORKFLOW_STATES: readonly WorkflowState[] = ['completed', 'failed', 'cancelled']

/** One row of the per-task table. */
export interface TaskRow {
  state: TaskState
  /** The task's job (an ordinary job of this requester), once started. */
  jobId?: string
  /** The job's last state seen. */
  jobState?: string
  error?: JobError
  startedAt?: number
  endedAt?: number
}

export interface WorkflowRecord {
  id: WorkflowId
  workflow: Workflow
  createdAt: number
  /** The sum of every task's worst-case escrow (its maxPrice), checked against the balance. */
  escrowPlan: number
  tasks: Record<string, TaskRow>
  history: Array<{ state: WorkflowState; at: number }>
}
