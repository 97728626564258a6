import { DmsError } from '../../actors/errors.js'

/** What the orchestrator refuses a job operation with (REST status and code in specs/rest-api.md). */
export class JobNotFoundError extends DmsError {
  constructor(id: string) {
    super('JOB_NOT_FOUND', `no job ${id}`)
  }
}
export class JobEndedError extends DmsError {
  constructor(id: string, state: string) {
    super('JOB_ENDED', `job ${id} already ended: ${state}`)
  }
}

/** A rerun asked of a job that has not ended. */
export class JobLiveError extends DmsError {
  readonly statusCode = 409
  constructor(id: string, state: string) {
    super('JOB_LIVE', `job ${id} is ${state}: only an ended job can be rerun (or cancel it first)`)
  }
}

export class BadCursorError extends DmsError {
  readonly statusCode = 400
  readonly field = 'querystring/cursor'
  constructor() {
    super('INVALID_REQUEST', 'querystring/cursor: not a cursor this node gave (use `next` of a page)')
  }
}
