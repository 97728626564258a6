/**
 * The `cancelling` step on a simulated clock: nothing to undo before a contract; with one, the
 * provider is asked to stop, the stopped run's receipt is waited for (bounded) and the contract
 * terminated REQUESTER_CANCELLED with it (the time used is paid), or without it when the provider
 * is silent.
 */
import assert from 'node:assert/strict'
import { RequestTimeoutError } from '../../../../actors/errors.js'
import { TERMINATION, type ContractProof } from '../../../../dms/contracts/model.js'
import { cancelStep } from '../../../../dms/orchestrator/steps/cancel.js'
import { W } from '../../../../dms/protocol/behaviours.js'
import type { JobResult, TerminateRequest } from '../../../../dms/protocol/messages.js'
import { makeContract, makeReceipt, newParty } from '../../../helpers/contracts.js'
import { CONFIG, jobRecord, never, outcome, stepDeps, T0 } from '../../../helpers/steps.js'

describe('orchestrator/steps/cancel', () => {
  const provider = newParty()
  const contract = makeContract(newParty(), provider, newParty().peer, { jobId: 'job-1' })
  const contracted = () =>
    jobRecord({
      winner: { bidId: contract.terms.bidId, provider: provider.peer, why: 'only bid' },
      contract,
      proof: { contractId: contract.terms.contractId } as ContractProof,
    })
  const stopped: JobResult = {
    jobId: 'job-1',
    receipt: makeReceipt(contract, provider, { status: 'cancelled', wallSeconds: 3 }),
    stdout: '',
    stderr: '',
    truncated: false,
    outputs: [],
  }
  const terminated = (f: ReturnType<typeof stepDeps>) =>
    f.contractDb.calls.filter((c) => c.op === 'terminate').map((c) => c.req as TerminateRequest)

  it('before a contract: nothing is sent, the cancel is only stamped', async () => {
    const f = stepDeps()
    assert.deepEqual(await cancelStep(f.deps)(jobRecord(), never()), { cancelRequestedAt: T0 })
    assert.deepEqual(f.actor.sent, [])
    assert.deepEqual(f.contractDb.calls, [])
  })

  it('stops the run, waits for its receipt and terminates the contract with it', async () => {
    const f = stepDeps()
    f.actor.answer(W.cancel, () => ({ stopping: true }))
    const done = outcome(cancelStep(f.deps)(contracted(), never()), f.clock)
    await f.clock.advanceAsync(1500)
    f.session.setResult(stopped) // the stopped run's result arrives
    const { value, at } = await done
    assert.equal(at, T0 + 1500, 'terminated as soon as the receipt came')
    assert.deepEqual(f.actor.sent[0].payload, { jobId: 'job-1', contractId: contract.terms.contractId })
    const [t] = terminated(f)
    assert.equal(t.reason, TERMINATION.requesterCancelled)
    assert.equal(t.receipt, stopped.receipt, 'the receipt bills the time used')
    assert.equal(value?.result, stopped)
    assert.equal(value?.cancelRequestedAt, T0 + 1500)
    assert.equal(value?.settlement?.outcome, 'terminated')
  })

  it('a provider stopping but sending no receipt: terminated without one after the request timeout', async () => {
    const f = stepDeps()
    f.actor.answer(W.cancel, () => ({ stopping: true }))
    const done = outcome(cancelStep(f.deps)(contracted(), never()), f.clock)
    await f.clock.advanceAsync(CONFIG.requestTimeoutMs)
    const { at } = await done
    assert.equal(at, T0 + CONFIG.requestTimeoutMs)
    assert.equal(terminated(f)[0].receipt, undefined)
  })

  it('a silent provider: terminated without a receipt, and nothing waited for', async () => {
    const f = stepDeps()
    f.actor.answer(W.cancel, () => {
      throw new RequestTimeoutError('/dms/job/cancel', CONFIG.requestTimeoutMs)
    })
    const patch = await cancelStep(f.deps)(contracted(), never())
    assert.equal(patch.settlement?.outcome, 'terminated')
    assert.equal(terminated(f).length, 1)
    assert.equal(patch.result, undefined)
  })

  it("cancelled while verifying: the provider is not asked, the contract is terminated on the result's receipt", async () => {
    const f = stepDeps()
    const done: JobResult = { ...stopped, receipt: makeReceipt(contract, provider, { wallSeconds: 7 }) }
    const patch = await cancelStep(f.deps)({ ...contracted(), result: done }, never())
    assert.deepEqual(f.actor.sent, [], 'the run is over: nothing to stop')
    const [t] = terminated(f)
    assert.equal(t.reason, TERMINATION.requesterCancelled)
    assert.equal(t.receipt, done.receipt, "the run's receipt bills the time used")
    assert.equal(patch.settlement?.outcome, 'terminated')
  })
})
