/**
 * The `verifying` step: the receipt must be this contract's and signed by the provider; the
 * outputs are fetched from the provider and checked (data-plane.ts, here scripted). Failed checks
 * are kept in the record, not thrown: the settlement then refunds the escrow.
 */
import assert from 'node:assert/strict'
import type { ContractProof } from '../../../../dms/contracts/model.js'
import { verifyStep } from '../../../../dms/orchestrator/steps/verify.js'
import type { JobResult } from '../../../../dms/protocol/messages.js'
import { makeContract, makeReceipt, newParty } from '../../../helpers/contracts.js'
import { CONFIG, jobRecord, never, stepDeps, T0 } from '../../../helpers/steps.js'

describe('orchestrator/steps/verify', () => {
  const provider = newParty()
  const contract = makeContract(newParty(), provider, newParty().peer, { jobId: 'job-1' })
  const resultOf = (receipt = makeReceipt(contract, provider)): JobResult => ({
    jobId: 'job-1',
    receipt,
    stdout: '',
    stderr: '',
    truncated: false,
    outputs: [],
  })
  const job = (result: JobResult) =>
    jobRecord({
      winner: { bidId: contract.terms.bidId, provider: provider.peer, why: 'only bid' },
      contract,
      proof: { contractId: contract.terms.contractId } as ContractProof,
      result,
    })

  it('a receipt of this contract signed by the provider, and outputs that check out: both ok', async () => {
    const f = stepDeps()
    assert.deepEqual(await verifyStep(f.deps)(job(resultOf()), never()), {
      verification: { outputsHashOk: true, receiptSignatureOk: true },
    })
  })

  it('a receipt signed by another key, or of another contract, does not verify', async () => {
    const other = makeContract(newParty(), provider, newParty().peer)
    for (const receipt of [makeReceipt(contract, newParty()), makeReceipt(other, provider)]) {
      const f = stepDeps()
      const { verification } = await verifyStep(f.deps)(job(resultOf(receipt)), never())
      assert.equal(verification?.receiptSignatureOk, false)
    }
  })

  it('outputs that do not check out are recorded with the reason', async () => {
    const f = stepDeps()
    f.blobs.verdict = { ok: false, reason: 'out.txt in the archive does not match its manifest entry' }
    const { verification } = await verifyStep(f.deps)(job(resultOf()), never())
    assert.deepEqual(verification, {
      outputsHashOk: false,
      receiptSignatureOk: true,
      outputsProblem: 'out.txt in the archive does not match its manifest entry',
    })
  })

  it("the archive fetch gets a deadline from the verifying stamp (size at the minimum rate) and the job's disk", async () => {
    const f = stepDeps()
    const size = 1024 * 1024
    const r = { ...resultOf(), archive: { sha256: 'ab'.repeat(32), size } }
    const stamped = { ...job(r), history: [{ state: 'verifying' as const, at: T0 - 5000 }] }
    await verifyStep(f.deps)(stamped, never())
    const [opts] = f.blobs.fetches
    const budgetMs = CONFIG.outputsPace.graceMs + (size * 1000) / CONFIG.outputsPace.minBytesPerSecond
    assert.equal(opts.deadline?.budgetMs, budgetMs)
    assert.equal(opts.deadline?.at, T0 - 5000 + budgetMs, 'a restored job does not get a new deadline')
    assert.equal(opts.diskBytes, stamped.spec.resources.diskBytes)
  })
})
