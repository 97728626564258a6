/**
 * The requester's queue routes (batches of jobs): `POST|GET /v1/queues`, `GET|DELETE
 * /v1/queues/:id`, `POST /v1/queues/:id/drain`, over the queues port. Spec: specs/queues.md.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { apiError } from './errors.js'
import type { QueuesPort } from './ports.js'
import { NewQueueBody, QueueIdParams, QueueListReply, QueueReply } from './schemas.js'

export interface QueueRoutesOptions {
  queues: QueuesPort
}

export const queueRoutes: FastifyPluginAsync<QueueRoutesOptions> = (base: FastifyInstance, { queues }) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const notFound = { description: 'QUEUE_NOT_FOUND' }

  app.post(
    '/v1/queues',
    {
      schema: { body: NewQueueBody },
      config: {
        doc: {
          role: 'requester',
          summary: 'create a queue (a batch of jobs); jobs join it with `queue` in their spec',
          responses: { 201: { description: 'the queue, active', schema: QueueReply } },
        },
      },
    },
    async (req, reply) => reply.status(201).send(await queues.create(req.body)),
  )

  app.get(
    '/v1/queues',
    {
      config: {
        doc: {
          role: 'requester',
          summary: 'every queue, newest first, with its counts',
          responses: { 200: { description: 'the queues', schema: QueueListReply } },
        },
      },
    },
    async () => ({ queues: await queues.list() }),
  )

  app.get(
    '/v1/queues/:id',
    {
      schema: { params: QueueIdParams },
      config: {
        doc: {
          role: 'requester',
          summary: 'one queue: state, history, counts of its jobs (active, completed, failed, cancelled)',
          responses: { 200: { description: 'the queue', schema: QueueReply }, 404: notFound },
        },
      },
    },
    async (req, reply) => {
      const q = await queues.get(req.params.id)
      if (q === undefined)
        return reply.status(404).send(apiError('QUEUE_NOT_FOUND', `no queue ${req.params.id}`))
      return q
    },
  )

  app.post(
    '/v1/queues/:id/drain',
    {
      schema: { params: QueueIdParams },
      config: {
        doc: {
          role: 'requester',
          summary: 'drain: new jobs are refused (409 QUEUE_DRAINING), live ones finish; then `drained`',
          responses: {
            202: { description: 'draining (or drained, when no job was live)', schema: QueueReply },
            404: notFound,
            409: { description: 'QUEUE_DRAINING or QUEUE_ENDED: the queue is not active' },
          },
        },
      },
    },
    async (req, reply) => reply.status(202).send(await queues.drain(req.params.id)),
  )

  app.delete(
    '/v1/queues/:id',
    {
      schema: { params: QueueIdParams },
      config: {
        doc: {
          role: 'requester',
          summary: 'cancel a queue and every live job of it (each ends `cancelled`)',
          responses: {
            202: { description: 'cancelled; its jobs are being cancelled', schema: QueueReply },
            404: notFound,
            409: { description: 'QUEUE_ENDED: the queue already ended' },
          },
        },
      },
    },
    async (req, reply) => reply.status(202).send(await queues.cancel(req.params.id)),
  )
  return Promise.resolve()
}
