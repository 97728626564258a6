/**
 * Provider faults after the contract: a step that fails once the contract-db has locked the
 * escrow (invoke, await-result, verify) terminates the contract with PROVIDER_FAULT, so the
 * escrow returns to the requester, and tells the dropped provider to stop its run. The job then
 * bids again without that provider while retries last (job-machine.ts). Spec:
 * specs/state-machines.md ("Provider faults"), specs/contract-db.md ("Terminate").
 */
import { codeOf } from '../../../actors/errors.js'
import {
  TERMINATION,
  type ContractTerms,
  type Settlement,
  type TerminationReason,
} from '../../contracts/model.js'
import { W } from '../../protocol/behaviours.js'
import { handleOf, INBOX } from '../../protocol/handles.js'
import type { JobRecord } from '../job-record.js'
import { JobFailure, type Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'

export type TerminateDeps = Pick<StepDeps, 'log' | 'actor' | 'contractDb'>

/** How long a dropped provider is given to hear the cancel (it may well be dead). */
export const STOP_DROPPED_TIMEOUT_MS = 5000

/**
 * Wraps a step after contract verification: when it fails (not on abort), the contract is
 * terminated for provider fault; the signed termination lands in the record as its `settlement`
 * (the failure's patch), and the failure is rethrown as a JobFailure for the machine's retry.
 */
export function terminatesOnFailure(d: TerminateDeps, step: Step): Step {
  return async (job, signal) => {
    try {
      return await step(job, signal)
    } catch (err) {
      if (signal.aborted || job.proof === undefined) throw err
      const failure = err instanceof JobFailure ? err : new JobFailure(codeOf(err), (err as Error).message)
      failure.patch = {
        settlement: await terminate(d, job, TERMINATION.providerFault, failure.message, signal),
      }
      stopDropped(d, job)
      throw failure
    }
  }
}

/** Terminates the job's contract; undefined (logged) when the contract-db did not answer. */
export async function terminate(
  d: Pick<StepDeps, 'log' | 'contractDb'>,
  job: JobRecord,
  reason: TerminationReason,
  detail: string,
  signal: AbortSignal,
): Promise<Settlement | undefined> {
  try {
    const terms = job.contract?.terms as ContractTerms
    return await d.contractDb.terminate({ contractId: terms.contractId, reason, detail }, terms, { signal })
  } catch (err) {
    d.log.warn({ err, jobId: job.id }, 'contract not terminated: escrow stays locked')
    return undefined
  }
}

/**
 * Tells a provider dropped for a fault to stop the run, in case it is alive after all (slow, or
 * cut off for a while): its container would otherwise run to the end for a contract that is
 * already terminated. Best effort: a dead provider cannot hear it.
 */
function stopDropped(d: Pick<StepDeps, 'actor'>, job: JobRecord): void {
  const peer = job.winner?.provider
  const contractId = job.contract?.terms.contractId
  if (peer === undefined || contractId === undefined) return
  const to = handleOf(peer, INBOX.provider, job.providerAddrs?.[peer])
  d.actor
    .request(to, W.cancel, { jobId: job.id, contractId }, { timeoutMs: STOP_DROPPED_TIMEOUT_MS })
    .catch(() => undefined)
}
