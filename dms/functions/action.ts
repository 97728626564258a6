/**
 * The action descriptor (specs/functions.md, "Actions"): a function at a version and build system
 * version, its inputs by content hash and size, and named attachments. Its id is the sha256 of its
 * canonical JSON, which is also the bytes of the build file the worker reads: two equal actions
 * are one action, and the result cache is keyed by it. `POST /v1/actions` takes a batch of them
 * with what the market needs to run them (the price ceiling, a queue).
 */
import { Type, type Static } from '@sinclair/typebox'
import { createHash } from 'node:crypto'
import { canonicalJson } from '../../actors/canonical-json.js'
import { compileOnUse, strictObject } from '../schema.js'
import { fieldProblem } from './describe-error.js'
import { InvalidActionError } from './errors.js'
import { blobRefSchema, nameSchema, sha256Schema, sizeSchema, versionSchema } from './names.js'

/** An action's id: the sha256 (hex) of its descriptor's canonical JSON. */
export type ActionId = string

/** Most inputs (and attachments) one action names. */
export const MAX_ACTION_INPUTS = 1000
/** Most bytes of one action's inputs and attachments together (they are staged for the job). */
export const MAX_ACTION_BYTES = 4 * 1024 * 1024 * 1024
/** Most actions in one `POST /v1/actions`. */
export const MAX_ACTION_BATCH = 1000

export const actionSchema = strictObject(
  {
    function: nameSchema,
    version: Type.String({ ...versionSchema }),
    buildSystemVersion: Type.String({ ...versionSchema }),
    inputs: Type.Array(blobRefSchema, { maxItems: MAX_ACTION_INPUTS }),
    attachments: Type.Optional(
      Type.Array(strictObject({ name: nameSchema, sha256: sha256Schema, size: sizeSchema }), {
        maxItems: 64,
        description: 'named blobs the worker finds under Attachments/<name>',
      }),
    ),
  },
  { $id: 'ActionDescriptor' },
)
export type ActionDescriptor = Static<typeof actionSchema>

/** The body of `POST /v1/actions`. */
export const actionBatchSchema = strictObject(
  {
    actions: Type.Array(actionSchema, { minItems: 1, maxItems: MAX_ACTION_BATCH }),
    maxPrice: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: "each action's job's price ceiling, in micro-tokens (the job spec's maxPrice)",
    }),
    queue: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9-]{1,64}$',
        description: 'the queue the jobs join (specs/queues.md)',
      }),
    ),
    cache: Type.Optional(
      Type.Boolean({
        description:
          'false: run even an action with a verified result (a non-deterministic function); default true',
      }),
    ),
  },
  { $id: 'ActionBatch' },
)
export type ActionBatch = Static<typeof actionBatchSchema>

const check = compileOnUse<ActionBatch>(actionBatchSchema, { allErrors: false, strict: true })

export function actionIdOf(a: ActionDescriptor): ActionId {
  return createHash('sha256').update(canonicalJson(a)).digest('hex')
}

/** Checks a posted batch; throws InvalidActionError naming the field at fault. */
export function parseActionBatch(input: unknown): ActionBatch {
  const validate = check()
  if (!validate(input)) throw new InvalidActionError(...fieldProblem(validate.errors?.[0]))
  input.actions.forEach((a, i) => {
    const names = new Set<string>()
    ;(a.attachments ?? []).forEach((t, j) => {
      if (names.has(t.name))
        throw new InvalidActionError(`actions.${i}.attachments.${j}.name`, `${t.name} is named twice`)
      names.add(t.name)
    })
    const blobs = [...a.inputs, ...(a.attachments ?? [])]
    if (blobs.length > MAX_ACTION_INPUTS)
      throw new InvalidActionError(
        `actions.${i}.inputs`,
        `${blobs.length} inputs and attachments, at most ${MAX_ACTION_INPUTS} together`,
      )
    const total = blobs.reduce((n, b) => n + b.size, 0)
    if (total > MAX_ACTION_BYTES)
      throw new InvalidActionError(
        `actions.${i}.inputs`,
        `${total} bytes, at most ${MAX_ACTION_BYTES} together`,
      )
  })
  return input
}
