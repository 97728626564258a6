/**
 * The `settling` step: sign the verification and have the contract-db settle the contract on the
 * provider's receipt (retried with backoff while it is unreachable or silent: contract-clients/client.ts).
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
  type Receipt,
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
  /** Fetches the outputs of an overruled rejection from the contract-db (it keeps them a while). */
  blobs?: Pick<StepDeps['blobs'], 'fetchOutputs'>
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
    // Paid on the contract-db's check: it has the outputs, and hands them on to this requester.
    if (!verified && settlement.reason === TERMINATION.rejectionOverruled && !v.outputsHashOk) {
      const handed = await outputsFromContractDb(d, job, r, signal)
      if (handed.ok) {
        d.log.info({ jobId: job.id }, 'outputs fetched from the contract-db after its check')
        const verification = {
          ...v,
          outputsHashOk: true,
          outputsProblem: `at the provider: ${v.outputsProblem ?? 'not verified'}; fetched from the contract-db, which checked them`,
        }
        if (v.usageOk !== false) return { settlement, verification, ...runError(receipt) }
      }
    }
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
    return { settlement, ...runError(receipt) }
  }
}

/** A run that did not complete fails its job RUN_<STATUS>; a completed one has no error. */
function runError(receipt: Receipt): { error?: { code: string; message: string } } {
  if (receipt.status === 'completed') return {}
  return {
    error: {
      code: `RUN_${receipt.status.toUpperCase()}`,
      message: receipt.reason ?? `run ${receipt.status} (exit code ${receipt.exitCode})`,
    },
  }
}

/** The outputs of an overruled rejection, fetched from the contract-db and checked. */
async function outputsFromContractDb(d: SettleDeps, job: JobRecord, r: JobResult, signal: AbortSignal) {
  if (d.blobs === undefined || d.contractDb.handle === undefined) return { ok: false as const }
  const budgetMs = transferBudgetMs(r.archive?.size ?? 0, d.config.outputsPace)
  const cdb = d.contractDb.handle()
  try {
    return await d.blobs.fetchOutputs({ peer: cdb.peer, addrs: [...(cdb.addrs ?? [])] }, r, {
      signal,
      timeoutMs: d.config.requestTimeoutMs,
      deadline: { at: d.clock.now() + budgetMs, clock: d.clock, budgetMs },
      diskBytes: job.spec.resources.diskBytes,
      download: job.spec.outputsStay !== true,
    })
  } catch (err) {
    d.log.warn({ err, jobId: job.id }, 'outputs not fetched from the contract-db')
    return { ok: false as const }
  }
}
