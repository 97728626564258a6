/**
 * A provider fault after the contract (terminate.ts): the failed step's contract is terminated
 * PROVIDER_FAULT, the termination lands in the failure's patch, the dropped provider is told to
 * stop, and the failure is rethrown for the machine's retry; not on abort, nor before a proof.
 */
import assert from 'node:assert/strict'
import { UnreachableError } from '../../../../actors/errors.js'
import { TERMINATION, type ContractProof } from '../../../../dms/contracts/model.js'
import { JobFailure, type Step } from '../../../../dms/orchestrator/job-machine.js'
import { jobSteps } from '../../../../dms/orchestrator/steps/index.js'
import { STOP_DROPPED_TIMEOUT_MS, terminatesOnFailure } from '../../../../dms/orchestrator/steps/terminate.js'
import { W } from '../../../../dms/protocol/behaviours.js'
import type { JobResult, TerminateRequest } from '../../../../dms/protocol/messages.js'
import { makeContract, makeReceipt, newParty } from '../../../helpers/contracts.js'
import { jobRecord, never, outcome, stepDeps } from '../../../helpers/steps.js'

describe('orchestrator/steps/terminate', () => {
  const provider = newParty()
  const contract = makeContract(newParty(), provider, newParty().peer, { jobId: 'job-1' })
  const contracted = () =>
    jobRecord({
      winner: { bidId: contract.terms.bidId, provider: provider.peer, why: 'only bid' },
      contract,
      proof: { contractId: contract.terms.contractId } as ContractProof,
      providerAddrs: { [provider.peer]: ['/ip4/127.0.0.1/tcp/1'] },
    })
  const failing =
    (err: Error): Step =>
    () =>
      Promise.reject(err)

  it('terminates the contract for provider fault, keeps the termination, tells the provider to stop', async () => {
    const f = stepDeps()
    f.actor.answer(W.cancel, () => ({ stopping: false }))
    const step = terminatesOnFailure(
      f.deps,
      failing(new JobFailure('PROVIDER_SILENT', 'provider silent for 6000 ms')),
    )
    const { error } = await outcome(step(contracted(), never()))
    assert.ok(error instanceof JobFailure)
    assert.equal(error.code, 'PROVIDER_SILENT')
    const [call] = f.contractDb.calls
    assert.equal(call.op, 'terminate')
    assert.deepEqual(call.req, {
      contractId: contract.terms.contractId,
      reason: TERMINATION.providerFault,
      detail: 'provider silent for 6000 ms',
    })
    assert.equal(error.patch?.settlement?.outcome, 'terminated')
    const [stop] = f.actor.of(W.cancel)
    assert.deepEqual(stop.to?.addrs, ['/ip4/127.0.0.1/tcp/1'])
    assert.deepEqual(stop.payload, { jobId: 'job-1', contractId: contract.terms.contractId })
    assert.equal(stop.opts?.timeoutMs, STOP_DROPPED_TIMEOUT_MS)
  })

  it('any error becomes a JobFailure with its code (the machine retries JobFailures)', async () => {
    const f = stepDeps()
    const step = terminatesOnFailure(
      f.deps,
      failing(new UnreachableError(provider.peer, new Error('refused'))),
    )
    const { error } = await outcome(step(contracted(), never()))
    assert.ok(error instanceof JobFailure)
    assert.equal(error.code, 'UNREACHABLE')
  })

  it('a contract-db that does not answer: the job still fails, with no settlement (logged)', async () => {
    const f = stepDeps()
    f.contractDb.closeAnswer = () => {
      throw new UnreachableError('cdb', new Error('refused'))
    }
    const { error } = await outcome(
      terminatesOnFailure(f.deps, failing(new Error('boom')))(contracted(), never()),
    )
    assert.ok(error instanceof JobFailure)
    assert.equal(error.patch?.settlement, undefined)
  })

  it('not on a cancel (abort), and not before a proof: the error passes through untouched', async () => {
    const f = stepDeps()
    const err = new Error('aborted')
    const ac = new AbortController()
    ac.abort(err)
    const step = terminatesOnFailure(f.deps, failing(err))
    assert.equal((await outcome(step(contracted(), ac.signal))).error, err)
    assert.equal((await outcome(step(jobRecord(), never()))).error, err)
    assert.deepEqual(f.contractDb.calls, [])
    assert.deepEqual(f.actor.sent, [])
  })

  it('jobSteps wraps invoke, awaitResult and verify: a verify that throws is a provider fault', async () => {
    const f = stepDeps()
    f.blobs.fetchOutputs = () => Promise.reject(new Error('the archive is not a tar'))
    const steps = jobSteps(f.deps)
    const job = {
      ...contracted(),
      result: {
        jobId: 'job-1',
        receipt: makeReceipt(contract, provider),
        outputs: [],
      } as Partial<JobResult> as JobResult,
    }
    const { error } = await outcome(steps.verify(job, never()))
    assert.ok(error instanceof JobFailure)
    assert.match(error.message, /not a tar/)
    assert.deepEqual(
      f.contractDb.calls.map((c) => (c.req as TerminateRequest).reason),
      [TERMINATION.providerFault],
    )
  })
})
