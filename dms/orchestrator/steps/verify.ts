/**
 * The `verifying` step: check the provider's signed receipt (for this contract, signed by the
 * provider) and fetch and check its outputs file by file (data-plane.ts). A failed check is kept
 * in the record's `verification` (the settlement then refunds the escrow); a malformed result
 * makes this step throw, which is the provider's fault too (terminate.ts).
 * Spec: specs/protocol.md ("Verification"), specs/data-plane.md.
 */
import { verifyDoc } from '../../contracts/canonical.js'
import { DOMAIN } from '../../contracts/model.js'
import { publicKeyOf } from '../../protocol/handles.js'
import type { JobResult } from '../../protocol/messages.js'
import type { Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'

export type VerifyDeps = Pick<StepDeps, 'log' | 'session' | 'blobs' | 'config'>

export function verifyStep(d: VerifyDeps): Step {
  return async (job, signal) => {
    const r = job.result as JobResult
    const provider = job.winner?.provider as string
    const receiptSignatureOk =
      r.receipt?.receipt?.contractId === job.contract?.terms.contractId &&
      verifyDoc(publicKeyOf(provider), DOMAIN.receipt, r.receipt.receipt, r.receipt.signature)
    // The outputs are fetched (one archive, in chunks) and checked file by file; a workflow task
    // whose outputs are handed on keeps them at its provider (its manifest is checked here).
    const outputs = await d.blobs.fetchOutputs(
      { peer: provider, addrs: d.session.providerAddrs.get(provider) ?? [] },
      r,
      { signal, timeoutMs: d.config.requestTimeoutMs, download: job.spec.outputsStay !== true },
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
