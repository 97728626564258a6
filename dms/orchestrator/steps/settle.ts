/**
 * The `settling` step: sign the verification and have the contract-db settle the contract on the
 * provider's receipt (retried with backoff while it is unreachable or silent: contracts/client.ts).
 * Settled either way; the job completes only when the work succeeded and was verified, else it
 * fails with VERIFICATION_FAILED or RUN_<STATUS>. A settle the contract-db refuses is followed by
 * a terminate, so no escrow stays locked; the job fails SETTLEMENT_FAILED. Spec: specs/contract-db.md ("Settle").
 */
import { hashDoc, signDoc } from '../../contracts/canonical.js'
import { codeOf } from '../../../actors/errors.js'
import {
  DOMAIN,
  TERMINATION,
  type ContractTerms,
  type Settlement,
  type Verification,
} from '../../contracts/model.js'
import { transferBudgetMs } from '../../blobs/transfer.js'
import type { JobResult } from '../../protocol/messages.js'
import type { JobRecord } from '../job-record.js'
import { JobFailure, type Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'
import { terminate } from './terminate.js'

export type SettleDeps = Pick<StepDeps, 'clock' | 'contractDb' | 'key' | 'log'> & {
  config: Pick<StepDeps['config'], 'requestTimeoutMs' | 'outputsPace'>
}

/** Settle refusals that are about the provider's receipt. */
const RECEIPT_REFUSALS = ['BAD_RECEIPT', 'BAD_SIGNATURE']

export function settleStep(d: SettleDeps): Step {
  return async (job, signal) => {
    const r = job.result as JobResult
    const v = job.verification as NonNullable<JobRecord['verification']>
    const verified = v.outputsHashOk && v.receiptSignatureOk && v.usageOk !== false
    const contractId = job.contract?.terms.contractId as string
    const verification: Verification = {
      contractId,
      receiptHash: hashDoc(r.receipt?.receipt),
      verified,
      outputsHashOk: v.outputsHashOk,
      receiptSignatureOk: v.receiptSignatureOk,
      verifiedAt: d.clock.now(),
    }
    let settlement: Settlement
    try {
      settlement = await d.contractDb.settle(
        {
          contractId,
          receipt: r.receipt,
          verification: { verification, signature: signDoc(d.key, DOMAIN.verification, verification) },
        },
        job.contract?.terms as ContractTerms,
        // A rejection is checked by the contract-db, which fetches the outputs itself first.
        verified
          ? { signal }
          : {
              signal,
              timeoutMs:
                d.config.requestTimeoutMs + transferBudgetMs(r.archive?.size ?? 0, d.config.outputsPace),
            },
      )
    } catch (err) {
      const failure = new JobFailure(
        'SETTLEMENT_FAILED',
        `contract-db did not settle: ${(err as Error).message}`,
      )
      // A refused settle must not leave the escrow locked: the contract is terminated instead,
      // for provider fault when the refusal is about its receipt, else as a cancel (the time the
      // contract-db observed is paid). Not when the node is stopping: a restart settles.
      if (!signal.aborted) {
        const reason = RECEIPT_REFUSALS.includes(codeOf(err))
          ? TERMINATION.providerFault
          : TERMINATION.requesterCancelled
        const settlement = await terminate(d, job, reason, failure.message, signal)
        if (settlement !== undefined) failure.patch = { settlement }
      }
      throw failure
    }
    const receipt = r.receipt.receipt
    if (!verified)
      return {
        settlement,
        error: {
          code: 'VERIFICATION_FAILED',
          message:
            settlement.reason === TERMINATION.rejectionOverruled
              ? `${v.outputsProblem ?? v.usageProblem ?? 'outputs or receipt did not verify'} here, but the contract-db fetched the outputs and they match the receipt: the provider was paid (REJECTION_OVERRULED)`
              : `${v.outputsProblem ?? v.usageProblem ?? 'outputs or receipt did not verify'}; the contract-db checked the outputs too: escrow refunded`,
        },
      }
    if (receipt.status !== 'completed')
      return {
        settlement,
        error: {
          code: `RUN_${receipt.status.toUpperCase()}`,
          message: receipt.reason ?? `run ${receipt.status} (exit code ${receipt.exitCode})`,
        },
      }
    return { settlement }
  }
}
