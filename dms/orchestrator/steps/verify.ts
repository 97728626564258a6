/**
 * The `verifying` step: check the provider's signed receipt (for this contract, signed by the
 * provider) and fetch and check its outputs file by file (data-plane.ts). A failed check is kept
 * in the record's `verification` (the settlement then refunds the escrow); a malformed result
 * makes this step throw, which is the provider's fault too (terminate.ts). Outputs not fetched by
 * the deadline (size at `outputsPace`, from the `verifying` stamp) fail the check.
 * Spec: specs/protocol.md ("Verification"), specs/data-plane.md.
 */
import { transferBudgetMs } from '../../blobs/transfer.js'
import { verifyDoc } from '../../contracts/canonical.js'
import { DOMAIN } from '../../contracts/model.js'
import { publicKeyOf } from '../../protocol/handles.js'
import type { JobResult } from '../../protocol/messages.js'
import type { Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'

export type VerifyDeps = Pick<StepDeps, 'clock' | 'log' | 'session' | 'blobs' | 'config'>

export function verifyStep(d: VerifyDeps): Step {
  return async (job, signal) => {
    const r = job.result as JobResult
    const provider = job.winner?.provider as string
    const receiptSignatureOk =
      r.receipt?.receipt?.contractId === job.contract?.terms.contractId &&
      verifyDoc(publicKeyOf(provider), DOMAIN.receipt, r.receipt.receipt, r.receipt.signature)
    // The outputs are fetched (one archive, in chunks) and checked file by file, by a deadline
    // counted from the `verifying` stamp, so a job restored after a restart does not start over.
    const since = job.history.findLast((h) => h.state === 'verifying')?.at ?? d.clock.now()
    const budgetMs = transferBudgetMs(r.archive?.size ?? 0, d.config.outputsPace)
    const outputs = await d.blobs.fetchOutputs(
      { peer: provider, addrs: d.session.providerAddrs.get(provider) ?? [] },
      r,
      {
        signal,
        timeoutMs: d.config.requestTimeoutMs,
        deadline: { at: since + budgetMs, clock: d.clock, budgetMs },
        diskBytes: job.spec.resources.diskBytes,
      },
    )
    if (!outputs.ok) d.log.warn({ jobId: job.id, reason: outputs.reason }, 'outputs did not verify')
    return {
      verification: {
        outputsHashOk: outputs.ok,
        receiptSignatureOk,
        ...(outputs.ok ? {} : { outputsProblem: outputs.reason }),
      },
    }
  }
}
