/**
 * Errors an Executor rejects with. Callers branch on `name` (or the stable `code`); every message
 * says what was wrong and how to fix it.
 */
import { DmsError } from '../../actors/errors.js'

/** The image is not in the local engine, and no registry is assumed to be reachable to pull it. */
export class ImageNotFoundError extends DmsError {
  constructor(
    readonly image: string,
    /** Why a pull failed, when one was tried. */
    readonly pullError?: string,
  ) {
    super(
      'IMAGE_NOT_FOUND',
      pullError === undefined
        ? `image ${image} is not present locally and pulling is off: ` +
            `build or load it on this machine first (e.g. docker import / docker load)`
        : `image ${image} is not present locally and could not be pulled (${pullError}): ` +
            `check the registry, or build or load it on this machine (e.g. docker import / docker load)`,
    )
  }
}

/** The container engine does not answer (not installed, not started, or no permission on its socket). */
export class ExecutorUnavailableError extends DmsError {
  constructor(
    readonly engine: string,
    readonly detail: string,
  ) {
    super(
      'EXECUTOR_UNAVAILABLE',
      `the ${engine} engine is not reachable (${detail}): run scripts/docker-bootstrap.sh to start it`,
    )
  }
}

/** The spec cannot be run as given (bad allocation id, empty command, limits out of range). */
export class InvalidSpecError extends DmsError {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super('INVALID_SPEC', `invalid execution spec: ${field} ${problem}`)
  }
}

/** A run for this allocation is already in progress, or its container was left behind. */
export class AllocationBusyError extends DmsError {
  constructor(
    readonly allocationId: string,
    detail: string,
  ) {
    super('ALLOCATION_BUSY', `allocation ${allocationId} cannot be run: ${detail}`)
  }
}

/** `reattach` found no container for the allocation (it was removed, or never created). */
export class AllocationNotFoundError extends DmsError {
  constructor(readonly allocationId: string) {
    super('ALLOCATION_NOT_FOUND', `allocation ${allocationId} has no container to re-attach to`)
  }
}
