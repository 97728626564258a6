/**
 * The `settling` step: sign the verification and have the contract-db settle the contract on the
 * provider's receipt (retried with backoff while it is unreachable or silent: contracts/client.ts).
 * Settled either way; the job completes only when the work succeeded and was verified, else it
 * fails with VERIFICATION_FAILED or RUN_<STATUS>. Spec: specs/contract-db.md ("Settle").
 */
import { hashDoc, signDoc } from '../../contracts/canonical.js'
import { DOMAIN, type ContractTerms, type Settlement, type Verification } from '../../contracts/model.js'
import type { JobResult } from '../../protocol/messages.js'
import type { JobRecord } from '../job-record.js'
import { JobFailure, type Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'

export type SettleDeps = Pick<StepDeps, 'clock' | 'contractDb' | 'key'>

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
        { signal },
      )
    } catch (err) {
      throw new JobFailure('SETTLEMENT_FAILED', `contract-db did not settle: ${(err as Error).message}`)
    }
    const receipt = r.receipt.receipt
    if (!verified)
      return {
        settlement,
        error: {
          code: 'VERIFICATION_FAILED',
          message: `${v.usageProblem ?? 'outputs or receipt did not verify'}; escrow refunded`,
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
