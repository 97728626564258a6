/** The function routes' shapes: `/v1/workers`, `/v1/functions`, `/v1/actions` (specs/functions.md). */
import { Type } from '@sinclair/typebox'
import { strictObject } from '../../schema.js'
import { anyObject, described, int, opt, reply, str } from './common.js'

const blobRef = reply({ sha256: opt(str), size: opt(int) })

/** `POST /v1/workers`: registered, or the blobs this node lacks. */
export const WorkerRegistrationReply = reply({
  id: opt(Type.String(described("the worker's id: sha256 of its descriptor's canonical JSON"))),
  registered: opt(Type.Boolean()),
  needs: opt(
    Type.Array(blobRef, {
      description:
        'the blobs this node lacks: upload each with PUT /v1/blobs, then post the descriptor again',
    }),
  ),
})

export const WorkerSummary = reply({
  id: opt(str),
  name: opt(str),
  buildSystemVersion: opt(str),
  functions: opt(Type.Array(reply({ name: opt(str), version: opt(str) }))),
  registeredAt: opt(int),
  descriptor: opt(anyObject),
})
export const WorkerListReply = reply({ workers: opt(Type.Array(WorkerSummary)) })

export const FunctionTableReply = reply({
  functions: opt(
    Type.Array(
      reply({
        function: opt(str),
        version: opt(str),
        buildSystemVersion: opt(str),
        workers: opt(Type.Array(str, described('worker ids, the first is the one actions run on'))),
      }),
    ),
  ),
})

export const ActionReply = reply({
  id: opt(Type.String(described("the action's id: sha256 of its descriptor's canonical JSON"))),
  state: opt(Type.String(described('running, completed (verified and settled), failed or cancelled'))),
  function: opt(str),
  version: opt(str),
  buildSystemVersion: opt(str),
  worker: opt(str),
  jobId: opt(Type.String(described("the action's last job: see it with the job routes"))),
  jobState: opt(str),
  jobs: opt(Type.Array(str)),
  cached: opt(Type.Boolean(described('this post answered a verified result and ran nothing'))),
  outputs: opt(Type.Array(reply({ path: opt(str), sha256: opt(str), size: opt(int) }))),
  error: opt(reply({ code: opt(str), message: opt(str) })),
  history: opt(
    Type.Array(reply({ state: opt(str), at: opt(int), jobId: opt(str) }), {
      description:
        'GET only: `posted`, then each state of its jobs (the newest 20) with its time (ms since epoch), oldest first',
    }),
  ),
})
export const ActionsReply = reply({ actions: opt(Type.Array(ActionReply)) })

/** `:id` of `GET /v1/actions/:id`. */
export const ActionIdParams = strictObject({
  id: Type.String({
    minLength: 1,
    maxLength: 64,
    description: '64 lowercase hex; anything else is not found',
  }),
})
