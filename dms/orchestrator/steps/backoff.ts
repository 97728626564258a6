/**
 * The `retrying` step: waits until the job's `retryAt` on the clock (a retry policy's backoff,
 * specs/job-spec.md "Retry policy"). The time is absolute and stored, so a restarted requester
 * waits only what is left.
 */
import { delay } from '../../../actors/clock.js'
import type { Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'

export function backoffStep(d: Pick<StepDeps, 'clock'>): Step {
  return async (job, signal) => {
    const wait = (job.retryAt ?? 0) - d.clock.now()
    if (wait > 0) await delay(wait, { clock: d.clock, signal })
    return { retryAt: undefined }
  }
}
