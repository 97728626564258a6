/**
 * The settle handler on the real contract machine over fakes (in-memory records and accounts, a
 * manual clock): a good receipt and verification settle; every bad one is refused with its code
 * before the contract's machine gets an event.
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../../actors/clock.js'
import { DEADLINES } from '../../../../dms/contract-db/deadlines.js'
import { settleHandler, type SettleHandler } from '../../../../dms/contract-db/handlers/settle.js'
import type { ContractRecord } from '../../../../dms/contract-db/records.js'
import { hashDoc, signDoc } from '../../../../dms/contracts/canonical.js'
import { DOMAIN, type SignedContract } from '../../../../dms/contracts/model.js'
import { silentLogger } from '../../../../dms/log.js'
import { fakeContracts, proposeActive, refusal, type FakeContracts } from '../../../helpers/contract-db.js'
import {
  makeContract,
  makeReceipt,
  makeSettle,
  makeVerification,
  newParty,
} from '../../../helpers/contracts.js'

const T0 = 1_800_000_000_000

describe('contract-db/handlers/settle', () => {
  const req = newParty()
  const prov = newParty()
  let f: FakeContracts
  let settle: SettleHandler
  let c: SignedContract
  let active: ContractRecord

  beforeEach(async () => {
    f = fakeContracts(new ManualClock(T0))
    f.accounts.set(req.peer, { peer: req.peer, balance: 100, escrow: 0 })
    settle = settleHandler({ contracts: f.closable, log: silentLogger, clock: f.clock, deadlines: DEADLINES })
    c = makeContract(req, prov, 'cdb', { now: T0, pricePerHour: 3600, maxDurationSeconds: 60 })
    active = await proposeActive(f, c, { escrowLocked: 60 })
  })

  it('settles on the receipt and the verification, from either party, and answers the settlement', async () => {
    f.clock.advance(12_000)
    const s = await settle(prov.peer, makeSettle(c, req, prov, { wallSeconds: 10.2 }))
    assert.deepEqual(
      [s.outcome, s.paidToProvider, s.refundedToRequester, s.settledAt],
      ['settled', 11, 49, T0 + 12_000],
    )
    assert.deepEqual(f.records.get(c.terms.contractId)?.settlement, s)
    assert.equal(f.records.get(c.terms.contractId)?.closedBy, prov.peer)
    assert.deepEqual(f.accounts.get(prov.peer), { peer: prov.peer, balance: 11, escrow: 0 })
  })

  it('pays no more time than it observed: a receipt claiming the max duration 200 ms after the lock', async () => {
    f.clock.advance(200)
    const s = await settle(prov.peer, makeSettle(c, req, prov, { wallSeconds: 60 }))
    assert.deepEqual([s.paidToProvider, s.refundedToRequester, s.billedSeconds], [1, 59, 0.2])
  })

  it('refuses an unknown contract, a stranger, and a closed contract (with what it kept)', async () => {
    const good = makeSettle(c, req, prov)
    assert.equal((await refusal(settle(req.peer, { ...good, contractId: 'nope' }))).code, 'UNKNOWN_CONTRACT')
    assert.equal((await refusal(settle(newParty().peer, good))).code, 'NOT_A_PARTY')
    const s = await settle(req.peer, good)
    const again = await refusal(settle(req.peer, good))
    assert.equal(again.code, 'CONTRACT_NOT_ACTIVE')
    assert.deepEqual(again.data, { state: 'settled', settlement: s })
    assert.equal(f.commits.length, 2, 'the lock and one close')
  })

  it('refuses a bad receipt or verification before the machine gets an event', async () => {
    const receipt = makeReceipt(c, prov, { wallSeconds: 5 })
    const verification = makeVerification(c, receipt, req)
    const id = c.terms.contractId
    const forged = makeReceipt(c, req)
    const otherJob = { ...receipt.receipt, jobId: 'other' }
    const cases: Array<[string, unknown, string]> = [
      ['no receipt', { contractId: id, verification }, 'BAD_RECEIPT'],
      [
        'a receipt for another job',
        {
          contractId: id,
          receipt: { receipt: otherJob, signature: signDoc(prov.key, DOMAIN.receipt, otherJob) },
          verification,
        },
        'BAD_RECEIPT',
      ],
      [
        'a receipt not signed by the provider',
        { contractId: id, receipt: forged, verification: makeVerification(c, forged, req) },
        'BAD_SIGNATURE',
      ],
      [
        'a verification of another receipt',
        { contractId: id, receipt, verification: makeVerification(c, makeReceipt(c, prov), req) },
        'BAD_VERIFICATION',
      ],
      [
        'a verification not signed by the requester',
        {
          contractId: id,
          receipt,
          verification: {
            ...verification,
            signature: signDoc(prov.key, DOMAIN.verification, verification.verification),
          },
        },
        'BAD_SIGNATURE',
      ],
    ]
    for (const [what, body, code] of cases)
      assert.equal((await refusal(settle(req.peer, body as never))).code, code, what)
    assert.deepEqual(f.records.get(id), active, 'still active, untouched')
    assert.equal(hashDoc(f.commits.map((x) => x.to)), hashDoc(['active']))
  })
})
