/**
 * Claims and disputes (claim.ts) on the real contract machine over fakes and a manual clock: a
 * provider whose requester stayed silent is paid on its receipt past settleBy, not before; the
 * requester may dispute once within the window, which is recorded and moves no money.
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../../actors/clock.js'
import { DEADLINES } from '../../../../dms/contract-db/deadlines.js'
import { settleHandler, type SettleHandler } from '../../../../dms/contract-db/handlers/settle.js'
import { terminateHandler, type TerminateHandler } from '../../../../dms/contract-db/handlers/terminate.js'
import type { SignedContract } from '../../../../dms/contracts/model.js'
import { silentLogger } from '../../../../dms/log.js'
import { fakeContracts, proposeActive, refusal, type FakeContracts } from '../../../helpers/contract-db.js'
import { makeContract, makeReceipt, makeVerification, newParty } from '../../../helpers/contracts.js'

const T0 = 1_800_000_000_000
// max duration 60 s + the 10 min grace
const SETTLE_BY = T0 + 60_000 + DEADLINES.settleGraceMs

describe('contract-db/handlers/claim (terminate REQUESTER_SILENT, and disputes)', () => {
  const req = newParty()
  const prov = newParty()
  let f: FakeContracts
  let terminate: TerminateHandler
  let settle: SettleHandler
  let c: SignedContract

  beforeEach(async () => {
    f = fakeContracts(new ManualClock(T0))
    f.accounts.set(req.peer, { peer: req.peer, balance: 100, escrow: 0 })
    const deps = { contracts: f.closable, log: silentLogger, clock: f.clock, deadlines: DEADLINES }
    terminate = terminateHandler(deps)
    settle = settleHandler(deps)
    c = makeContract(req, prov, 'cdb', { now: T0, pricePerHour: 3600, maxDurationSeconds: 60 })
    await proposeActive(f, c, { escrowLocked: 60, settleBy: SETTLE_BY })
  })
  const claim = (by = prov.peer, receipt = makeReceipt(c, prov, { wallSeconds: 10 })) =>
    terminate(by, { contractId: c.terms.contractId, reason: 'REQUESTER_SILENT', receipt })

  it('past settleBy the provider is paid on its receipt; the contract rests claimed, closed by it', async () => {
    f.clock.advance(SETTLE_BY - f.clock.now())
    const s = await claim()
    assert.deepEqual(
      [s.outcome, s.reason, s.paidToProvider, s.refundedToRequester],
      ['settled', 'REQUESTER_SILENT', 10, 50],
    )
    const rec = f.records.get(c.terms.contractId)!
    assert.equal(rec.state, 'claimed')
    assert.equal(rec.closedBy, prov.peer)
    assert.equal(rec.claim?.disputeBy, SETTLE_BY + DEADLINES.disputeWindowMs)
    assert.deepEqual(f.accounts.get(prov.peer), { peer: prov.peer, balance: 10, escrow: 0 })
    assert.deepEqual(
      f.notices.map((n) => n.state),
      ['claimed'],
      'the requester is told',
    )
    // Closed: no settle, terminate or second claim moves money again.
    assert.equal((await refusal(claim())).code, 'CONTRACT_NOT_ACTIVE')
    assert.equal(
      (await refusal(terminate(req.peer, { contractId: c.terms.contractId, reason: 'PROVIDER_FAULT' }))).code,
      'CONTRACT_NOT_ACTIVE',
    )
  })

  it('refuses a claim before settleBy, by the requester, or without a good receipt', async () => {
    f.clock.advance(SETTLE_BY - 1 - f.clock.now())
    const early = await refusal(claim())
    assert.deepEqual([early.code, early.data], ['CLAIM_TOO_EARLY', { settleBy: SETTLE_BY }])
    f.clock.advance(SETTLE_BY - f.clock.now())
    assert.equal((await refusal(claim(req.peer))).code, 'BAD_REASON')
    assert.equal((await refusal(claim(prov.peer, makeReceipt(c, req)))).code, 'BAD_SIGNATURE')
    assert.equal(
      (await refusal(terminate(prov.peer, { contractId: c.terms.contractId, reason: 'REQUESTER_SILENT' })))
        .code,
      'BAD_RECEIPT',
    )
    assert.equal(f.commits.length, 1, 'only the lock was written')
  })

  it('a claim bills no more than the observed time and no more than the escrow', async () => {
    f.clock.advance(SETTLE_BY - f.clock.now())
    const s = await claim(prov.peer, makeReceipt(c, prov, { wallSeconds: 5000 }))
    assert.equal(s.paidToProvider, 60)
  })

  it('its requester may dispute once within the window (recorded, no money moves); agreeing just reads it', async () => {
    f.clock.advance(SETTLE_BY - f.clock.now())
    const claimed = await claim()
    const receipt = makeReceipt(c, prov, { wallSeconds: 10 })
    const agree = {
      contractId: c.terms.contractId,
      receipt,
      verification: makeVerification(c, receipt, req, true),
    }
    assert.deepEqual(await settle(req.peer, agree), claimed)
    assert.equal(f.records.get(c.terms.contractId)?.dispute, undefined)
    const reject = { ...agree, verification: makeVerification(c, receipt, req, false) }
    assert.equal(
      (await refusal(settle(prov.peer, reject))).code,
      'CONTRACT_NOT_ACTIVE',
      'the provider cannot dispute',
    )
    f.clock.advance(1000)
    assert.deepEqual(await settle(req.peer, reject), claimed)
    const rec = f.records.get(c.terms.contractId)!
    assert.deepEqual(
      [rec.state, rec.dispute?.at, rec.dispute?.verification],
      ['claimed', SETTLE_BY + 1000, reject.verification],
    )
    assert.equal((await refusal(settle(req.peer, reject))).code, 'CONTRACT_NOT_ACTIVE', 'once')
    assert.deepEqual(f.accounts.get(prov.peer)?.balance, 10, 'nothing moved back')
  })

  it('a dispute after the window is refused', async () => {
    f.clock.advance(SETTLE_BY - f.clock.now())
    await claim()
    f.clock.advance(DEADLINES.disputeWindowMs + 1)
    const receipt = makeReceipt(c, prov)
    const r = await refusal(
      settle(req.peer, {
        contractId: c.terms.contractId,
        receipt,
        verification: makeVerification(c, receipt, req, false),
      }),
    )
    assert.equal(r.code, 'DISPUTE_WINDOW_CLOSED')
  })
})
