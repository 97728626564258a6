/** The functions' errors, each with a stable `code` (specs/functions.md, specs/rest-api.md). */
import { DmsError } from '../../actors/errors.js'

/** A worker descriptor refused: `field` is the path of the field at fault (HTTP 400). */
export class InvalidWorkerError extends DmsError {
  readonly statusCode = 400
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super('INVALID_WORKER', `${field || 'worker'}: ${problem}`)
  }
}

/** An action batch refused: `field` is the path of the field at fault (HTTP 400). */
export class InvalidActionError extends DmsError {
  readonly statusCode = 400
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super('INVALID_ACTION', `${field || 'action'}: ${problem}`)
  }
}

/** No registered worker implements the action's `[function, version, buildSystemVersion]` (HTTP 404). */
export class NoWorkerError extends DmsError {
  readonly statusCode = 404
  constructor(
    readonly field: string,
    fn: string,
    version: string,
    buildSystemVersion: string,
  ) {
    super(
      'NO_WORKER',
      `${field}: no worker registered here implements ${fn} version ${version} for build system ${buildSystemVersion}: register one with POST /v1/workers`,
    )
  }
}

export class ActionNotFoundError extends DmsError {
  readonly statusCode = 404
  constructor(id: string) {
    super('ACTION_NOT_FOUND', `no action ${id.slice(0, 80)} was posted here`)
  }
}
