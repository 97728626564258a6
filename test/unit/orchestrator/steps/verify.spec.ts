/**
 * The `verifying` step: the receipt must be this contract's and signed by the provider; the
 * outputs are fetched from the provider and checked (data-plane.ts, here scripted). Failed checks
 * are kept in the record, not thrown: the settlement then refunds the escrow.
 */
import assert from 'node:assert/strict'
import { signDoc } from '../../../../dms/contracts/canonical.js'
import { DOMAIN, type ContractProof, type SignedReceipt } from '../../../../dms/contracts/model.js'
import { JobFailure } from '../../../../dms/orchestrator/job-machine.js'
import { verifyStep } from '../../../../dms/orchestrator/steps/verify.js'
import type { JobResult } from '../../../../dms/protocol/messages.js'
import { makeContract, makeReceipt, newParty } from '../../../helpers/contracts.js'
import { CONFIG, jobRecord, never, outcome, stepDeps, T0 } from '../../../helpers/steps.js'

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

  it('a receipt signed by another key, of another contract or job is malformed: the step throws', async () => {
    const other = makeContract(newParty(), provider, newParty().peer)
    const wrongJob = makeReceipt(contract, provider)
    wrongJob.receipt = { ...wrongJob.receipt, jobId: 'not-this-job' }
    wrongJob.signature = signDoc(provider.key, DOMAIN.receipt, wrongJob.receipt)
    const cases: Array<[SignedReceipt, RegExp]> = [
      [makeReceipt(contract, newParty()), /not signed by the provider/],
      [makeReceipt(other, provider), /for another contract/],
      [wrongJob, /for another job/],
    ]
    for (const [receipt, why] of cases) {
      const f = stepDeps()
      const { error } = await outcome(verifyStep(f.deps)(job(resultOf(receipt)), never()))
      assert.ok(error instanceof JobFailure)
      assert.equal(error.code, 'BAD_RECEIPT')
      assert.match(error.message, why)
    }
  })

  it('a receipt claiming more wall time than the run took is not verified (usage inflated)', async () => {
    const f = stepDeps()
    const invoked = { history: [{ state: 'invoking' as const, at: f.clock.now() }] }
    f.clock.advance(200)
    // Signed by the provider, 200 ms after the invocation, claiming the whole max duration.
    const inflated = { ...job(resultOf(makeReceipt(contract, provider, { wallSeconds: 60 }))), ...invoked }
    const { verification } = await verifyStep(f.deps)(inflated, never())
    assert.equal(verification?.usageOk, false)
    assert.match(verification?.usageProblem ?? '', /claims 60 s of wall time, the run took at most 0.2 s/)
    // An honest receipt (its time within what was observed, plus slack) verifies.
    f.clock.advance(10_000)
    const honest = { ...job(resultOf(makeReceipt(contract, provider, { wallSeconds: 10 }))), ...invoked }
    const ok = await verifyStep(f.deps)(honest, never())
    assert.deepEqual(ok.verification, { outputsHashOk: true, receiptSignatureOk: true })
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
