/**
 * What the job's steps throw for the machine to act on (job-machine.ts): a failure with a stable
 * reason code, a refused contract (the next bid), a provider that wants its bid locked first.
 */
import { DmsError } from '../../actors/errors.js'
import type { JobError, JobRecord } from './job-record.js'

/** An error a step throws to fail the job with a stable reason code. */
export class JobFailure extends DmsError {
  /** Merged into the record with the error (e.g. the settlement of a terminated contract). */
  patch?: Partial<JobRecord>
  constructor(
    code: string,
    message: string,
    readonly extra: Partial<JobError> = {},
  ) {
    super(code, message)
  }
}

/**
 * The winning bid could not be contracted and nothing is locked at the contract-db (the provider
 * refused to countersign, or the contract-db refused the contract): the next bid is tried. `step`
 * is `lock` when the provider would not take the reserved bid, as a refused job request (the lock
 * folded into the contract): a matter of capacity, after which the job may queue.
 */
export class ContractRefusal extends JobFailure {
  constructor(
    code: string,
    message: string,
    readonly bid: { provider: string; bidId: string },
    readonly step: 'lock' | 'contract' = 'contract',
  ) {
    super(code, message)
  }
}

/**
 * The winner's provider answered the terms for its reserved bid `BID_NOT_LOCKED`: it does not fold
 * the lock into the contract (an older version). The job locks the bid first (`requesting`), then
 * sends the terms again. Spec: specs/protocol.md ("The lock folded into the contract").
 */
export class LockFirst extends DmsError {
  constructor(message: string) {
    super('BID_NOT_LOCKED', message)
  }
}
