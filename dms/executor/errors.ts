/**
 * Errors an Executor rejects with. Callers branch on `name` (or the stable `code`); every message
 * says what was wrong and how to fix it.
 */
import { DmsError } from '../../actors/errors.js'

/**
 * What the requester of a run is told about an executor error: an error may carry `peerMessage`,
 * its text for the other side (hints that only the provider's operator can act on stay in the
 * provider's log); others are told as they are.
 */
export function peerMessage(err: unknown): string {
  const e = err as { peerMessage?: unknown; message?: unknown } | null | undefined
  if (typeof e?.peerMessage === 'string') return e.peerMessage
  return typeof e?.message === 'string' ? e.message : String(err)
}

/** The image is not in the local engine, and no registry is assumed to be reachable to pull it. */
export class ImageNotFoundError extends DmsError {
  readonly peerMessage: string
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
    this.peerMessage = `image ${image} is not available on the provider`
  }
}

/** The container engine does not answer (not installed, not started, or no permission on its socket). */
export class ExecutorUnavailableError extends DmsError {
  readonly peerMessage = "the provider's container engine is not reachable: the run could not start"
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
