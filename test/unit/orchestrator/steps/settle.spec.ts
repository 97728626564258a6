/**
 * The `settling` step: the verification is signed with the node key and sent with the receipt;
 * the job completes only on verified, completed work; a contract-db that stays away fails it
 * SETTLEMENT_FAILED; one that is briefly unreachable is asked again after 1 s, 2 s (the real
 * client, on the simulated clock).
 */
import assert from 'node:assert/strict'
import { UnreachableError } from '../../../../actors/errors.js'
import { signDoc, verifyDoc } from '../../../../dms/contracts/canonical.js'
import { ContractDbClient } from '../../../../dms/contract-clients/client.js'
import { DOMAIN, type ContractProof, type Settlement } from '../../../../dms/contracts/model.js'
import { JobFailure } from '../../../../dms/orchestrator/job-machine.js'
import type { JobRecord } from '../../../../dms/orchestrator/job-record.js'
import { settleStep } from '../../../../dms/orchestrator/steps/settle.js'
import { W } from '../../../../dms/protocol/behaviours.js'
import type { JobResult, SettleRequest, TerminateRequest } from '../../../../dms/protocol/messages.js'
import { REFUSAL, refuse } from '../../../../dms/contracts/errors.js'
import { makeContract, makeReceipt, newParty } from '../../../helpers/contracts.js'
import { jobRecord, never, outcome, settlementFor, stepDeps, T0 } from '../../../helpers/steps.js'

describe('orchestrator/steps/settle', () => {
  const provider = newParty()
  const cdb = newParty()
  const job = (
    f: ReturnType<typeof stepDeps>,
    o: { status?: 'completed' | 'failed'; verified?: boolean } = {},
  ): JobRecord => {
    const contract = makeContract(f.requester, provider, cdb.peer, { jobId: 'job-1', now: T0 })
    const receipt = makeReceipt(contract, provider, {
      status: o.status,
      exitCode: o.status === 'failed' ? 2 : 0,
    })
    return jobRecord({
      winner: { bidId: contract.terms.bidId, provider: provider.peer, why: 'only bid' },
      contract,
      proof: { contractId: contract.terms.contractId } as ContractProof,
      result: { jobId: 'job-1', receipt } as JobResult,
      verification: { outputsHashOk: o.verified ?? true, receiptSignatureOk: true },
    })
  }

  it('verified, completed work: settled with a verification signed by the requester', async () => {
    const f = stepDeps()
    const j = job(f)
    const patch = await settleStep(f.deps)(j, never())
    assert.equal(patch.settlement?.outcome, 'settled')
    assert.equal(patch.error, undefined)
    const [call] = f.contractDb.calls
    const req = call.req as SettleRequest
    assert.equal(req.contractId, j.contract?.terms.contractId)
    assert.equal(req.receipt, j.result?.receipt)
    const v = req.verification
    assert.equal(v.verification.verified, true)
    assert.equal(v.verification.verifiedAt, T0)
    assert.ok(verifyDoc(f.requester.key.publicKey, DOMAIN.verification, v.verification, v.signature))
  })

  it('outputs that did not verify: settled (refunded), and the job fails VERIFICATION_FAILED', async () => {
    const f = stepDeps()
    const patch = await settleStep(f.deps)(job(f, { verified: false }), never())
    assert.equal(patch.settlement?.outcome, 'settled')
    assert.equal(patch.error?.code, 'VERIFICATION_FAILED')
    assert.equal((f.contractDb.calls[0].req as SettleRequest).verification.verification.verified, false)
  })

  it('a receipt whose usage did not verify: signed as not verified, the job fails VERIFICATION_FAILED', async () => {
    const f = stepDeps()
    const j = job(f)
    j.verification = { ...j.verification!, usageOk: false, usageProblem: 'the receipt claims 60 s' }
    const patch = await settleStep(f.deps)(j, never())
    assert.equal((f.contractDb.calls[0].req as SettleRequest).verification.verification.verified, false)
    assert.equal(patch.error?.code, 'VERIFICATION_FAILED')
    assert.match(
      patch.error?.message ?? '',
      /the receipt claims 60 s; the contract-db checked the outputs too: escrow refunded/,
    )
  })

  it('a rejection waits for the contract-db to fetch the outputs itself: its timeout grows with the archive', async () => {
    const f = stepDeps()
    const verified = job(f)
    await settleStep(f.deps)(verified, never())
    const rejected = job(f, { verified: false })
    rejected.result = { ...rejected.result!, archive: { sha256: 'a'.repeat(64), size: 256 * 1024 * 100 } }
    await settleStep(f.deps)(rejected, never())
    const [ok, no] = f.contractDb.calls
    assert.equal(ok.opts?.timeoutMs, undefined, 'a verified settle: the client default')
    // requestTimeoutMs + the pace's grace + 100 s for 25 MiB at 256 KiB/s.
    const { requestTimeoutMs, outputsPace } = f.deps.config
    assert.equal(no.opts?.timeoutMs, requestTimeoutMs + outputsPace.graceMs + 100_000)
  })

  it('a rejection the contract-db overruled: the job fails, and says the provider was paid', async () => {
    const f = stepDeps()
    f.contractDb.closeAnswer = (_op, req) => ({
      ...settlementFor((req as { contractId: string }).contractId, 'settled'),
      reason: 'REJECTION_OVERRULED',
    })
    const patch = await settleStep(f.deps)(job(f, { verified: false }), never())
    assert.equal(patch.error?.code, 'VERIFICATION_FAILED')
    assert.match(patch.error?.message ?? '', /the provider was paid \(REJECTION_OVERRULED\)/)
  })

  it('a run that failed: settled on its usage, and the job fails RUN_FAILED', async () => {
    const f = stepDeps()
    const patch = await settleStep(f.deps)(job(f, { status: 'failed' }), never())
    assert.equal(patch.error?.code, 'RUN_FAILED')
    assert.match(patch.error?.message ?? '', /exit code 2/)
  })

  it('a contract-db that does not settle fails the job SETTLEMENT_FAILED', async () => {
    const f = stepDeps()
    f.contractDb.closeAnswer = () => {
      throw new UnreachableError('cdb', new Error('connection refused'))
    }
    const { error } = await outcome(settleStep(f.deps)(job(f), never()))
    assert.ok(error instanceof JobFailure)
    assert.equal(error.code, 'SETTLEMENT_FAILED')
  })

  it('a settle refused for its receipt is followed by a terminate for provider fault: no escrow stays locked', async () => {
    const f = stepDeps()
    f.contractDb.closeAnswer = (op, req) => {
      if (op === 'settle') throw refuse(REFUSAL.badReceipt, 'the receipt is for another job')
      return settlementFor((req as { contractId: string }).contractId, 'terminated')
    }
    const { error } = await outcome(settleStep(f.deps)(job(f), never()))
    assert.ok(error instanceof JobFailure)
    assert.equal(error.code, 'SETTLEMENT_FAILED')
    const [, term] = f.contractDb.calls
    assert.equal(term.op, 'terminate')
    assert.equal((term.req as TerminateRequest).reason, 'PROVIDER_FAULT')
    assert.equal(error.patch?.settlement?.outcome, 'terminated')
  })

  it('backoff: an unreachable contract-db is asked again 1 s, then 2 s later', async () => {
    const f = stepDeps()
    const j = job(f)
    let calls = 0
    f.actor.answer(W.settle, (req): Settlement => {
      if (++calls < 3) throw new UnreachableError('cdb', new Error('connection refused'))
      const terms = j.contract!.terms
      const body = {
        contractId: req.contractId,
        outcome: 'settled' as const,
        paidToProvider: 1,
        refundedToRequester: terms.escrow - 1,
        billedSeconds: 1,
        settledAt: f.clock.now(),
        contractDb: cdb.peer,
      }
      return { ...body, signature: signDoc(cdb.key, DOMAIN.settlement, body) }
    })
    f.deps.contractDb = new ContractDbClient(
      { actor: f.actor, clock: f.clock },
      { contractDb: { peer: cdb.peer, addrs: [] } },
    )
    const done = outcome(settleStep(f.deps)(j, never()), f.clock)
    await f.clock.advanceAsync(3000)
    const { value, at } = await done
    assert.equal(value?.settlement?.outcome, 'settled')
    assert.deepEqual(
      f.actor.of(W.settle).map((s) => s.at - T0),
      [0, 1000, 3000],
    )
    assert.equal(at, T0 + 3000)
  })
})
