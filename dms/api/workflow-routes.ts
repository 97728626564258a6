/**
 * The requester's workflow routes: `POST /v1/workflows`, `GET /v1/workflows`,
 * `GET|DELETE /v1/workflows/:id`, `POST /v1/workflows/:id/tasks/:task/outputs`, over the workflows port (on a node that is not a requester, its
 * null object answers 409). Spec: specs/rest-api.md, specs/workflow.md.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { isCode } from '../../actors/errors.js'
import { workflowSchema } from '../workflows/document.js'
import { apiError } from './errors.js'
import type { WorkflowsPort, WorkflowView } from './ports.js'
import {
  JobIdParams,
  TaskOutputsReply,
  WorkflowListReply,
  WorkflowReply,
  WorkflowStateReply,
  WorkflowTaskParams,
  type JobStateReply as StateReply,
  type WorkflowListReply as WorkflowList,
  type WorkflowReply as WorkflowRead,
} from './schemas.js'

export interface WorkflowRoutesOptions {
  workflows: WorkflowsPort
}

const stateOf = (wf: WorkflowView): StateReply => ({ id: wf.record.id, state: wf.state })

function summary(w: WorkflowView): NonNullable<WorkflowList['workflows']>[number] {
  const rows = Object.values(w.record.tasks)
  return {
    id: w.record.id,
    name: w.record.workflow.name,
    state: w.state,
    createdAt: w.record.createdAt,
    tasks: rows.length,
    completed: rows.filter((r) => r.state === 'completed').length,
  }
}

export const workflowRoutes: FastifyPluginAsync<WorkflowRoutesOptions> = (
  base: FastifyInstance,
  { workflows },
) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/workflows',
    {
      config: {
        doc: {
          summary: 'post a workflow: tasks that depend on each other, outputs that become inputs',
          role: 'requester',
          body: workflowSchema,
          description:
            "Checked by parseWorkflow: a refusal is 400 INVALID_WORKFLOW with `field`. A balance at the contract-db short of the sum of the tasks' maxPrice is 402 INSUFFICIENT_BALANCE, saying by how much.",
          responses: {
            201: { description: 'stored; its first tasks are posted', schema: WorkflowStateReply },
            400: { description: 'INVALID_WORKFLOW' },
            402: { description: 'INSUFFICIENT_BALANCE' },
            503: { description: 'BALANCE_UNKNOWN: the contract-db does not answer' },
          },
        },
      },
    },
    async (req, reply) => {
      try {
        return await reply.status(201).send(stateOf(await workflows.post(req.body)))
      } catch (err) {
        if (!isCode(err, 'INVALID_WORKFLOW')) throw err
        const e = err as Error & { code: string; field: string }
        return reply.status(400).send(apiError(e.code, e.message, e.field))
      }
    },
  )

  app.get(
    '/v1/workflows',
    {
      config: {
        doc: {
          role: 'requester',
          summary: "list this requester's workflows, newest first",
          responses: { 200: { description: 'the workflows', schema: WorkflowListReply } },
        },
      },
    },
    async (): Promise<WorkflowList> => {
      const all = await workflows.list()
      return { workflows: all.sort((a, b) => b.record.createdAt - a.record.createdAt).map(summary) }
    },
  )

  app.get(
    '/v1/workflows/:id',
    {
      schema: { params: JobIdParams },
      config: {
        doc: {
          role: 'requester',
          summary: 'one workflow: state, document, escrow plan and the per-task table',
          description:
            'The stored WorkflowRecord (dms/workflows/record.ts) with `state`; `tasks` maps each task to its state, job id, job state, error and times.',
          responses: {
            200: { description: 'the workflow', schema: WorkflowReply },
            404: { description: 'WORKFLOW_NOT_FOUND' },
          },
        },
      },
    },
    async (req, reply) => {
      const wf = await workflows.get(req.params.id)
      if (wf === undefined)
        return reply.status(404).send(apiError('WORKFLOW_NOT_FOUND', `no workflow ${req.params.id}`))
      const read: WorkflowRead = {
        state: wf.state,
        ...wf.record,
        ...(wf.released !== undefined ? { released: wf.released } : {}),
      }
      return read
    },
  )

  app.delete(
    '/v1/workflows/:id',
    {
      schema: { params: JobIdParams },
      config: {
        doc: {
          role: 'requester',
          summary:
            'cancel a workflow: every live task is cancelled (paying the time used), no new task starts',
          responses: {
            202: { description: 'the cancel is under way', schema: WorkflowStateReply },
            404: { description: 'WORKFLOW_NOT_FOUND' },
            409: { description: 'WORKFLOW_ENDED: the workflow is already in a final state' },
          },
        },
      },
    },
    async (req, reply) => reply.status(202).send(stateOf(await workflows.cancel(req.params.id))),
  )

  app.post(
    '/v1/workflows/:id/tasks/:task/outputs',
    {
      schema: { params: WorkflowTaskParams },
      config: {
        doc: {
          role: 'requester',
          summary: "fetch one task's outputs to this node, even those left at its provider",
          description:
            "A task whose outputs were handed on to other tasks left them at its provider: they are fetched now and checked file by file against the manifest the provider signed (the receipt's outputsHash). Then `GET /v1/jobs/<jobId>/outputs...` serves them. A task of a pod: `jobId` is the pod's job and `files` are the task's own, under `<task>/` (with `pod`). Outputs handed on and not fetched before the workflow ended were released at its end (unless the document set keepOutputs): 410 OUTPUTS_RELEASED (specs/workflow.md, \"Outputs on demand\").",
          responses: {
            200: { description: "the task's job, manifest and archive", schema: TaskOutputsReply },
            404: { description: 'WORKFLOW_NOT_FOUND, TASK_NOT_FOUND' },
            409: { description: 'OUTPUTS_NOT_READY: the task has not completed' },
            410: {
              description:
                'OUTPUTS_RELEASED: left at the provider for the tasks downstream and released when the workflow ended (keep them with keepOutputs)',
            },
            502: { description: 'OUTPUTS_NOT_FETCHED: not fetched from the provider, or not matching' },
          },
        },
      },
    },
    async (req) => workflows.outputs(req.params.id, req.params.task),
  )
  return Promise.resolve()
}
