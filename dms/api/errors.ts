/**
 * The REST API's error answers: `{ error: { code, message, field? } }` (specs/rest-api.md,
 * "Errors"), from schema failures, route errors and the errors the ports throw.
 */
import type { FastifyError } from 'fastify'
import { DmsError } from '../../actors/errors.js'
import type { ApiError } from './schemas.js'

export type { ApiError } from './schemas.js'

export const apiError = (code: string, message: string, field?: string): ApiError => ({
  error: { code, message, field },
})

/** HTTP status of error codes thrown without a `statusCode`. */
export const STATUS: Record<string, number> = {
  JOB_NOT_FOUND: 404,
  JOB_ENDED: 409,
  JOB_LIVE: 409,
  QUEUE_NOT_FOUND: 404,
  QUEUE_DRAINING: 409,
  QUEUE_ENDED: 409,
  WORKFLOW_NOT_FOUND: 404,
  WORKFLOW_ENDED: 409,
  TASK_NOT_FOUND: 404,
  OUTPUTS_NOT_READY: 409,
  OUTPUTS_NOT_FETCHED: 502,
  INSUFFICIENT_BALANCE: 402,
  NOT_A_REQUESTER: 409,
  NOT_A_PROVIDER: 409,
  NODE_MODE_CONFLICT: 409,
}

/** An error a route throws: the code is stable, the status is HTTP. */
export class RouteError extends DmsError {
  constructor(
    readonly statusCode: number,
    code: string,
    message: string,
  ) {
    super(code, message)
  }
}

/**
 * A request that failed its route's schema, as `400 INVALID_REQUEST` naming the field
 * (`body/prices`, `querystring/follow`), or undefined when `err` is not a schema failure.
 */
export function validationError(err: FastifyError): ApiError | undefined {
  if (err.validation === undefined) return undefined
  const first = err.validation[0]
  const field = `${err.validationContext ?? 'body'}${first?.instancePath ?? ''}`
  const detail =
    first?.keyword === 'additionalProperties'
      ? `unknown field "${String((first.params as { additionalProperty?: string }).additionalProperty)}"`
      : (first?.message ?? err.message)
  return apiError('INVALID_REQUEST', `${field}: ${detail}`, field)
}
