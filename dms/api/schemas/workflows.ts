/** The workflow routes' shapes: `/v1/workflows...` (specs/workflow.md). */
import { Type, type Static } from '@sinclair/typebox'
import { strictObject } from '../../schema.js'
import type { Workflow } from '../../workflows/document.js'
import { described, int, opt, reply, str } from './common.js'
import { JobStateReply } from './jobs.js'

/** `POST /v1/workflows` (201) and `DELETE /v1/workflows/:id` (202). */
export const WorkflowStateReply = JobStateReply
export const WorkflowSummary = reply({
  id: opt(str),
  name: opt(str),
  state: opt(str),
  createdAt: opt(int),
  tasks: opt(int),
  completed: opt(int),
})
export const WorkflowListReply = reply({ workflows: opt(Type.Array(WorkflowSummary)) })
export type WorkflowListReply = Static<typeof WorkflowListReply>
/**
 * `GET /v1/workflows/:id`: the stored WorkflowRecord (dms/workflows/record.ts) with `state` (the
 * per-task table in `tasks`). The route's answer is declared with this type.
 */
export const WorkflowReply = Type.Object(
  {
    id: str,
    state: Type.String(described('running, cancelling, completed, failed or cancelled')),
    workflow: Type.Unsafe<Workflow>({
      type: 'object',
      additionalProperties: true,
      description: "the document as parsed: each task's job is a stored spec (sizes in bytes)",
    }),
    createdAt: int,
    escrowPlan: Type.Integer(described("the sum of the tasks' maxPrice, checked against the balance")),
    tasks: Type.Record(
      Type.String(),
      Type.Object({
        state: Type.String(described('waiting, started, completed, failed or cancelled')),
        jobId: opt(Type.String(described("the task's job: see it with the job routes"))),
        jobState: opt(str),
        error: opt(Type.Object({ code: str, message: str })),
        startedAt: opt(int),
        endedAt: opt(int),
      }),
    ),
    history: Type.Array(Type.Object({ state: str, at: int })),
    released: opt(
      Type.Boolean(
        described('once ended: the archives left at providers were released (false: keepOutputs)'),
      ),
    ),
  },
  { $id: 'WorkflowRecord' },
)
export type WorkflowReply = Static<typeof WorkflowReply>

/** `:id` and `:task` of `POST /v1/workflows/:id/tasks/:task/outputs`. */
export const WorkflowTaskParams = strictObject({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  task: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' }),
})
/** One task's outputs, fetched to the requester: then served by `/v1/jobs/<jobId>/outputs...`. */
export const TaskOutputsReply = reply({
  task: opt(str),
  pod: opt(
    Type.String(
      described("the task's pod: its job is the pod's, and `files` are the task's, under `<task>/`"),
    ),
  ),
  jobId: opt(Type.String(described("the task's job: its outputs routes serve the files"))),
  files: opt(Type.Array(reply({ path: opt(str), sha256: opt(str), size: opt(int) }))),
  archive: opt(Type.Union([reply({ sha256: opt(str), size: opt(int) }), Type.Null()])),
})
