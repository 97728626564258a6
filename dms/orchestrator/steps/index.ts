/**
 * A job's steps, built over its `StepDeps`: the machine (job-machine.ts) invokes them. The steps
 * after the contract whose failure is the provider's fault terminate the contract on failure.
 */
import type { JobSteps } from '../job-machine.js'
import { awaitResultStep } from './await-result.js'
import { backoffStep } from './backoff.js'
import { cancelStep } from './cancel.js'
import { closeContractStep } from './close-contract.js'
import { collectBidsStep } from './collect-bids.js'
import type { StepDeps } from './deps.js'
import { invokeStep } from './invoke.js'
import { requestLockStep } from './request-lock.js'
import { settleStep } from './settle.js'
import { terminatesOnFailure } from './terminate.js'
import { verifyStep } from './verify.js'
import { waitForCapacityStep } from './wait-for-capacity.js'
import { waitUntilStartStep } from './wait-until-start.js'

export type { CapacityWaits, StepConfig, StepDeps } from './deps.js'

export function jobSteps(d: StepDeps): JobSteps {
  return {
    waitUntilStart: waitUntilStartStep(d),
    waitForCapacity: waitForCapacityStep(d),
    collectBids: collectBidsStep(d),
    requestLock: requestLockStep(d),
    closeContract: closeContractStep(d),
    invoke: terminatesOnFailure(d, invokeStep(d)),
    awaitResult: terminatesOnFailure(d, awaitResultStep(d)),
    // A malformed result makes verify throw: that too is the provider's fault.
    verify: terminatesOnFailure(d, verifyStep(d)),
    settle: settleStep(d),
    cancel: cancelStep(d),
    backoff: backoffStep(d),
  }
}
