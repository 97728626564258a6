/**
 * The `cancelling` step: before a contract, nothing to undo (the provider's reservation or lock
 * lapses on its own). With one, ask the provider to stop the run and wait (bounded) for the
 * stopped run's receipt, then terminate the contract with REQUESTER_CANCELLED: the receipt's
 * usage bills the time used, the rest of the escrow is refunded. Cancelled while verifying (the
 * result is in, the outputs not yet checked): the provider is not asked, the fetch is abandoned and
 * the contract is terminated the same way on the result's receipt. Spec: specs/state-machines.md.
 */
import { TERMINATION, type ContractTerms } from '../../contracts/model.js'
import { W } from '../../protocol/behaviours.js'
import type { Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'
import { winnerHandle } from './providers.js'

export type CancelDeps = Pick<StepDeps, 'clock' | 'log' | 'actor' | 'session' | 'contractDb' | 'config'>

export function cancelStep(d: CancelDeps): Step {
  const { clock, session } = d
  return async (job, signal) => {
    if (job.proof === undefined) return { cancelRequestedAt: clock.now() }
    const contractId = job.contract?.terms.contractId as string
    const timeoutMs = d.config.requestTimeoutMs
    // Cancelled while verifying: the run is over and its receipt is in; nothing to stop.
    if (job.result === undefined)
      try {
        const r = await d.actor.request(
          winnerHandle(session, job),
          W.cancel,
          { jobId: job.id, contractId },
          { timeoutMs, signal },
        )
        // The stopped run's receipt (status cancelled, with its usage) bills the time used.
        if (r.stopping) await session.until(() => session.result !== undefined, timeoutMs, signal)
      } catch (err) {
        d.log.warn({ err, jobId: job.id }, 'provider did not confirm the cancel')
      }
    const receipt = (job.result ?? session.result)?.receipt
    const settlement = await d.contractDb.terminate(
      {
        contractId,
        reason: TERMINATION.requesterCancelled,
        detail: 'cancelled by the requester',
        ...(receipt !== undefined ? { receipt } : {}),
      },
      job.contract?.terms as ContractTerms,
      { signal },
    )
    return {
      settlement,
      cancelRequestedAt: clock.now(),
      ...(session.result ? { result: session.result } : {}),
    }
  }
}
