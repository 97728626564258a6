/**
 * The `scheduled` step: waits until the spec's `startAt`, then the job bids. The time is absolute,
 * so a restored job waits only what is left. Spec: specs/state-machines.md ("Scheduled and queued").
 */
import { delay } from '../../../actors/clock.js'
import type { Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'

/** Longest single timer (Node timers overflow past 2^31 ms, about 24.8 days). */
const MAX_TIMER_MS = 86_400_000

export function waitUntilStartStep(d: Pick<StepDeps, 'clock'>): Step {
  return async (job, signal) => {
    const at = job.spec.startAt ?? 0
    for (let left = at - d.clock.now(); left > 0; left = at - d.clock.now())
      await delay(Math.min(left, MAX_TIMER_MS), { clock: d.clock, signal })
    return {}
  }
}
