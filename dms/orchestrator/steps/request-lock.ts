/**
 * The `requesting` step: ask the winning provider to turn its reservation into a lock
 * (`/dms/job/request`). A refusal, silence or an unreachable provider rejects: the machine records
 * why and goes back to `selecting` for the next bid. Spec: specs/protocol.md ("Job request").
 */
import { W } from '../../protocol/behaviours.js'
import type { Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'
import { winnerHandle } from './providers.js'

export type RequestLockDeps = Pick<StepDeps, 'actor' | 'session' | 'config'>

export function requestLockStep(d: RequestLockDeps): Step {
  return async (job, signal) => {
    const bidId = job.winner?.bidId as string
    await d.actor.request(
      winnerHandle(d.session, job),
      W.jobRequest,
      { jobId: job.id, bidId },
      { timeoutMs: d.config.requestTimeoutMs, signal },
    )
    return {}
  }
}
