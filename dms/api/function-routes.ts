/**
 * The requester's function routes: `POST|GET /v1/workers`, `GET /v1/functions`, `POST
 * /v1/actions`, `GET /v1/actions/:id`, over the functions port (on a node that is not a
 * requester, its null object answers 409). Spec: specs/functions.md, specs/rest-api.md.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { actionBatchSchema } from '../functions/action.js'
import { workerSchema } from '../functions/worker.js'
import type { FunctionsPort } from './ports.js'
import {
  ActionIdParams,
  ActionReply,
  ActionsReply,
  FunctionTableReply,
  WorkerListReply,
  WorkerRegistrationReply,
} from './schemas.js'

export interface FunctionRoutesOptions {
  functions: FunctionsPort
}

export const functionRoutes: FastifyPluginAsync<FunctionRoutesOptions> = (
  base: FastifyInstance,
  { functions },
) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/workers',
    {
      config: {
        doc: {
          summary: 'register a worker: its files by content hash and the functions it implements',
          role: 'requester',
          body: workerSchema,
          description:
            'The needs dance: while a blob the descriptor names is not on this node, the answer is 200 with `registered: false` and `needs` (each missing blob once); upload them with PUT /v1/blobs and post the same descriptor again: 201 once registered (200 when it already was). A refusal is 400 INVALID_WORKER with `field`.',
          responses: {
            200: {
              description: 'the blobs still needed, or already registered',
              schema: WorkerRegistrationReply,
            },
            201: { description: 'registered', schema: WorkerRegistrationReply },
            400: { description: 'INVALID_WORKER' },
            409: { description: 'TOO_MANY_WORKERS' },
          },
        },
      },
    },
    async (req, reply) => {
      const r = await functions.registerWorker(req.body)
      return reply.status(r.created ? 201 : 200).send({ id: r.id, registered: r.registered, needs: r.needs })
    },
  )

  app.get(
    '/v1/workers',
    {
      config: {
        doc: {
          role: 'requester',
          summary: 'the workers registered on this node, oldest first',
          responses: { 200: { description: 'the workers', schema: WorkerListReply } },
        },
      },
    },
    async () => ({
      workers: (await functions.workers()).map((w) => ({
        id: w.id,
        name: w.descriptor.name,
        buildSystemVersion: w.descriptor.buildSystemVersion,
        functions: w.descriptor.functions,
        registeredAt: w.registeredAt,
        descriptor: w.descriptor,
      })),
    }),
  )

  app.get(
    '/v1/functions',
    {
      config: {
        doc: {
          role: 'requester',
          summary: 'the function table: function, version, build system version -> workers',
          responses: { 200: { description: 'the table', schema: FunctionTableReply } },
        },
      },
    },
    async () => ({ functions: await functions.functions() }),
  )

  app.post(
    '/v1/actions',
    {
      config: {
        doc: {
          role: 'requester',
          summary: 'post a batch of actions: each runs as a market job on the worker that implements it',
          body: actionBatchSchema,
          description:
            "Every action is checked, matched to a worker and its blobs found (with their sizes) before any is posted. Each answer is the action's view: a verified result already here answers with `cached: true` and posts nothing (unless `cache: false`); a live job of the same action is joined.",
          responses: {
            201: { description: 'the actions, in the order posted', schema: ActionsReply },
            400: { description: 'INVALID_ACTION, or the job spec refused (INVALID_JOB_SPEC)' },
            404: { description: 'NO_WORKER, QUEUE_NOT_FOUND' },
            409: { description: 'QUEUE_DRAINING, QUEUE_ENDED' },
          },
        },
      },
    },
    async (req, reply) => reply.status(201).send({ actions: await functions.postActions(req.body) }),
  )

  app.get(
    '/v1/actions/:id',
    {
      schema: { params: ActionIdParams },
      config: {
        doc: {
          role: 'requester',
          summary: 'one action: its state, its jobs and, once verified, its outputs by content hash',
          responses: {
            200: { description: 'the action', schema: ActionReply },
            404: { description: 'ACTION_NOT_FOUND' },
          },
        },
      },
    },
    async (req) => functions.action(req.params.id),
  )
  return Promise.resolve()
}
