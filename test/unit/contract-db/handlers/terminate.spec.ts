/**
 * The terminate handler on the real contract machine over fakes and a manual clock: who may use
 * which reason, and what each pays (a cancel bills the time used on the injected clock, or the
 * provider's receipt).
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../../actors/clock.js'
import { DEADLINES } from '../../../../dms/contract-db/deadlines.js'
import { terminateHandler, type TerminateHandler } from '../../../../dms/contract-db/handlers/terminate.js'
import type { SignedContract } from '../../../../dms/contracts/model.js'
import { silentLogger } from '../../../../dms/log.js'
import { fakeContracts, proposeActive, refusal, type FakeContracts } from '../../../helpers/contract-db.js'
import { makeContract, makeReceipt, newParty } from '../../../helpers/contracts.js'

const T0 = 1_800_000_000_000

describe('contract-db/handlers/terminate', () => {
  const req = newParty()
  const prov = newParty()
  let f: FakeContracts
  let terminate: TerminateHandler
  let c: SignedContract

  beforeEach(async () => {
    f = fakeContracts(new ManualClock(T0))
    f.accounts.set(req.peer, { peer: req.peer, balance: 100, escrow: 0 })
    terminate = terminateHandler({
      contracts: f.closable,
      log: silentLogger,
      clock: f.clock,
      deadlines: DEADLINES,
    })
    c = makeContract(req, prov, 'cdb', { now: T0, pricePerHour: 3600, maxDurationSeconds: 60 })
    await proposeActive(f, c, { escrowLocked: 60 })
  })
  const id = () => c.terms.contractId

  it('PROVIDER_FAULT, from either party: the whole escrow back to the requester, the detail kept', async () => {
    const s = await terminate(prov.peer, { contractId: id(), reason: 'PROVIDER_FAULT', detail: 'disk died' })
    assert.deepEqual(
      [s.outcome, s.reason, s.paidToProvider, s.refundedToRequester],
      ['terminated', 'PROVIDER_FAULT', 0, 60],
    )
    assert.equal(f.records.get(id())?.detail, 'disk died')
    assert.deepEqual(f.accounts.get(req.peer), { peer: req.peer, balance: 100, escrow: 0 })
    assert.deepEqual(
      f.notices.map((r) => r.closedBy),
      [prov.peer],
    )
  })

  it('REQUESTER_CANCELLED without a receipt pays the time since the escrow was locked', async () => {
    await f.clock.advanceAsync(20_500)
    const s = await terminate(req.peer, { contractId: id(), reason: 'REQUESTER_CANCELLED' })
    assert.deepEqual([s.paidToProvider, s.refundedToRequester, s.billedSeconds], [21, 39, 20.5])
  })

  it("REQUESTER_CANCELLED with the provider's receipt pays its wall time; a forged one is refused", async () => {
    const forged = await refusal(
      terminate(req.peer, { contractId: id(), reason: 'REQUESTER_CANCELLED', receipt: makeReceipt(c, req) }),
    )
    assert.equal(forged.code, 'BAD_SIGNATURE')
    f.clock.advance(50_000)
    const receipt = makeReceipt(c, prov, { wallSeconds: 3, status: 'cancelled' })
    const s = await terminate(req.peer, { contractId: id(), reason: 'REQUESTER_CANCELLED', receipt })
    assert.deepEqual([s.paidToProvider, s.refundedToRequester], [3, 57])
  })

  it('refuses a cancel by the provider and an unknown reason, and closes nothing', async () => {
    const byProvider = await refusal(
      terminate(prov.peer, { contractId: id(), reason: 'REQUESTER_CANCELLED' }),
    )
    assert.equal(byProvider.code, 'BAD_REASON')
    assert.match(byProvider.message, /only the requester can cancel/)
    const unknown = await refusal(terminate(req.peer, { contractId: id(), reason: 'BORED' as never }))
    assert.equal(unknown.code, 'BAD_REASON')
    assert.equal(f.records.get(id())?.state, 'active')
    assert.equal(f.commits.length, 1)
  })
})
