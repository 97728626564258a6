/** The queue routes' shapes: `/v1/queues...` (specs/queues.md). */
import { Type, type Static } from '@sinclair/typebox'
import { StringEnum, strictObject } from '../../schema.js'
import { anyObject, int, opt, reply, str } from './common.js'

/** A queue's id, in the queue routes and in `GET /v1/jobs?queue=`. */
export const queueId = Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$', description: 'a queue id' })

/** `POST /v1/queues`. */
export const NewQueueBody = strictObject({
  tag: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]*$',
    description: 'a name for people',
  }),
  maxRetries: opt(
    Type.Integer({ minimum: 0, maximum: 10, description: 'default `retries` of its jobs that set none' }),
  ),
  idleExpirySeconds: opt(
    Type.Integer({
      minimum: 1,
      maximum: 31_536_000,
      description:
        'an active queue with no live job this long expires; default requester.queueIdleExpirySeconds',
    }),
  ),
})
export type NewQueueBody = Static<typeof NewQueueBody>

/** `:id` of the queue routes. */
export const QueueIdParams = strictObject({ id: queueId })
export type QueueIdParams = Static<typeof QueueIdParams>

/** A queue: `POST|GET|DELETE /v1/queues/:id`, `POST /v1/queues/:id/drain`. */
export const QueueReply = reply({
  id: opt(str),
  tag: opt(str),
  maxRetries: opt(int),
  idleExpirySeconds: opt(int),
  state: opt(StringEnum(['active', 'draining', 'drained', 'cancelled', 'expired'])),
  createdAt: opt(int),
  lastActivityAt: opt(int),
  history: opt(Type.Array(anyObject)),
  counts: opt(reply({ active: opt(int), completed: opt(int), failed: opt(int), cancelled: opt(int) })),
})
export type QueueView = Static<typeof QueueReply>
export const QueueListReply = reply({ queues: opt(Type.Array(QueueReply)) })
