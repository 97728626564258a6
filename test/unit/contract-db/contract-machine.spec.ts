/**
 * The contract machine drives each contract: events move it, the money moves in the same change
 * as its record, a failed write changes nothing, and a stored record (also one stored by 0.1) is
 * resumed without running any effect. Real machine and book, fake effects, a manual clock.
 */
import assert from 'node:assert/strict'
import { createActor, waitFor } from 'xstate'
import { ManualClock } from '../../../actors/clock.js'
import { BadContractRecordError } from '../../../dms/contract-db/contract-book.js'
import { dataOf, WRITING, type ContractInput } from '../../../dms/contract-db/contract-machine.js'
import type { Account, ContractRecord } from '../../../dms/contract-db/records.js'
import { hashDoc } from '../../../dms/contracts/canonical.js'
import { fakeContracts, fakeSign, type FakeContracts } from '../../helpers/contract-db.js'
import { makeContract, makeReceipt, newParty } from '../../helpers/contracts.js'
import { loadFixture, recordsOf } from '../../helpers/fixtures.js'

const T0 = 1_800_000_000_000
const req = newParty()
const prov = newParty()

/** What the verify handler hands the machine: price 3600/hour for 60 s, escrow 60. */
function verified(clock: ManualClock): ContractInput {
  const contract = makeContract(req, prov, 'cdb', {
    now: clock.now(),
    pricePerHour: 3600,
    maxDurationSeconds: 60,
  })
  const t = contract.terms
  const proof = {
    contractId: t.contractId,
    termsHash: hashDoc(t),
    escrowLocked: t.escrow,
    issuedAt: clock.now(),
    contractDb: 'cdb',
    signature: 'proof',
  }
  return { contract, proof, activatedAt: clock.now() }
}

/** Rejects with the refusal's code and data. */
async function refusal(p: Promise<unknown>): Promise<{ code: string; data?: unknown }> {
  try {
    await p
  } catch (err) {
    return err as { code: string; data?: unknown }
  }
  assert.fail('expected a refusal')
}

describe('contract-db/contract-machine (drives each contract)', () => {
  let f: FakeContracts
  const account = (peer: string): Account | undefined => f.accounts.get(peer)

  beforeEach(() => {
    f = fakeContracts(new ManualClock(T0))
    f.accounts.set(req.peer, { peer: req.peer, balance: 1000, escrow: 0 })
  })

  it('VERIFY: proposed -> locking (writing) -> active, the record and the escrow lock in one change', async () => {
    const input = verified(f.clock)
    const actor = createActor(f.book.machine, { input, clock: f.clock }).start()
    assert.equal(actor.getSnapshot().value, 'proposed')
    actor.send({ type: 'VERIFY' })
    const writing = actor.getSnapshot()
    assert.equal(writing.value, 'locking')
    assert.ok(writing.hasTag(WRITING))
    assert.deepEqual(writing.context.next?.moves, [{ peer: req.peer, balance: -60, escrow: 60 }])
    assert.equal(f.commits.length, 0, 'nothing is written before the commit runs')

    const active = await waitFor(actor, (s) => !s.hasTag(WRITING))
    assert.equal(active.value, 'active')
    const stored = f.records.get(input.contract.terms.contractId)
    assert.deepEqual(stored, { ...input, state: 'active', history: [{ state: 'active', at: T0 }] })
    assert.deepEqual(active.context.data, dataOf(stored))
    assert.deepEqual(account(req.peer), { peer: req.peer, balance: 940, escrow: 60 })
    assert.equal(f.commits.length, 1)
    actor.stop()
  })

  it('a failed write changes nothing: the contract is back where it was, and the failure is reported', async () => {
    const input = verified(f.clock)
    f.failWith = new Error('disk full')
    await assert.rejects(f.book.propose(input), /disk full/)
    assert.equal(f.records.size, 0)
    assert.deepEqual(account(req.peer), { peer: req.peer, balance: 1000, escrow: 0 })

    f.failWith = undefined
    const active = await f.book.propose(input)
    f.failWith = new Error('disk full')
    const facts = { type: 'TERMINATE', by: req.peer, reason: 'PROVIDER_FAULT' } as const
    await assert.rejects(f.book.close(active, facts), /disk full/)
    assert.deepEqual(f.records.get(active.contract.terms.contractId), active, 'still active')
    assert.deepEqual(account(req.peer), { peer: req.peer, balance: 940, escrow: 60 })
    assert.deepEqual(f.notices, [], 'nobody is told of a close that was not written')
  })

  it('SETTLE: active -> settling -> settled; paid by the receipt, the rest refunded, the other party told', async () => {
    const input = verified(f.clock)
    const active = await f.book.propose(input)
    f.clock.advance(30_000)
    const receipt = makeReceipt(input.contract, prov, { wallSeconds: 10.2 }).receipt
    const closed = await f.book.close(active, { type: 'SETTLE', by: req.peer, receipt, verified: true })

    const body = {
      contractId: input.contract.terms.contractId,
      outcome: 'settled',
      paidToProvider: 11,
      refundedToRequester: 49,
      billedSeconds: 10.2,
      settledAt: T0 + 30_000,
      contractDb: 'cdb',
    }
    assert.equal(closed.state, 'settled')
    assert.deepEqual(closed.settlement, { ...body, signature: fakeSign(body) })
    assert.equal(closed.closedBy, req.peer)
    assert.deepEqual(closed.history, [
      { state: 'active', at: T0 },
      { state: 'settled', at: T0 + 30_000 },
    ])
    assert.deepEqual(f.records.get(body.contractId), closed)
    assert.deepEqual(f.notices, [closed])
    assert.deepEqual(account(req.peer), { peer: req.peer, balance: 989, escrow: 0 })
    assert.deepEqual(account(prov.peer), { peer: prov.peer, balance: 11, escrow: 0 })
    assert.deepEqual(
      f.commits.map((c) => c.moves.reduce((n, m) => n + m.balance + m.escrow, 0)),
      [0, 0],
      'no change makes or destroys money',
    )
  })

  it('a rejected result and a termination end terminated with their reason', async () => {
    const a = verified(f.clock)
    const b = verified(f.clock)
    const receipt = makeReceipt(a.contract, prov, { wallSeconds: 10 }).receipt
    const rejected = await f.book.close(await f.book.propose(a), {
      type: 'SETTLE',
      by: req.peer,
      receipt,
      verified: false,
    })
    assert.equal(rejected.state, 'terminated')
    assert.equal(rejected.settlement?.reason, 'REQUESTER_REJECTED_RESULT')
    assert.equal(rejected.settlement?.refundedToRequester, 60)

    const activeB = await f.book.propose(b)
    f.clock.advance(20_500)
    const cancelled = await f.book.close(activeB, {
      type: 'TERMINATE',
      by: req.peer,
      reason: 'REQUESTER_CANCELLED',
      detail: 'changed my mind',
    })
    assert.equal(cancelled.state, 'terminated')
    assert.deepEqual(
      [cancelled.settlement?.paidToProvider, cancelled.settlement?.refundedToRequester, cancelled.detail],
      [21, 39, 'changed my mind'],
      'the 20.5 s since the escrow was locked, on the injected clock',
    )
    assert.deepEqual(account(req.peer), { peer: req.peer, balance: 979, escrow: 0 })
  })

  it('a closed contract accepts no event, so it never closes twice; an active one is not verified again', async () => {
    const input = verified(f.clock)
    const active = await f.book.propose(input)
    assert.ok(f.book.accepts(active, 'SETTLE') && f.book.accepts(active, 'TERMINATE'))
    assert.equal(f.book.restore(active).can({ type: 'VERIFY' }), false)
    const closed = await f.book.close(active, { type: 'TERMINATE', by: prov.peer, reason: 'PROVIDER_FAULT' })
    assert.ok(!f.book.accepts(closed, 'SETTLE') && !f.book.accepts(closed, 'TERMINATE'))

    const again = await refusal(
      f.book.close(closed, { type: 'TERMINATE', by: req.peer, reason: 'PROVIDER_FAULT' }),
    )
    assert.equal(again.code, 'CONTRACT_NOT_ACTIVE')
    assert.deepEqual(again.data, { state: 'terminated', settlement: closed.settlement })
    assert.equal(f.commits.length, 2)
    assert.equal(f.notices.length, 1)
  })

  it('resumes every stored record, also those of 0.1, without running an effect, as often as it is asked', async () => {
    const fixture = await loadFixture('v0.1', 'contract-db')
    const stored = recordsOf<ContractRecord>(fixture, 'cdb-contracts')
    const input = verified(f.clock)
    const ours = await f.book.propose(input)
    const ourClosed = await f.book.close(ours, { type: 'TERMINATE', by: req.peer, reason: 'PROVIDER_FAULT' })
    const writes = f.commits.length
    for (const rec of [...stored, ours, ourClosed]) {
      const once = f.book.restore(rec)
      const twice = f.book.restore(rec)
      assert.equal(once.value, rec.state)
      assert.deepEqual(once.context.data, dataOf(rec))
      assert.deepEqual(twice.value, once.value)
      assert.deepEqual(twice.context, once.context)
    }
    assert.equal(f.commits.length, writes)
    assert.equal(f.notices.length, 1)

    // The 0.1 contract left active closes with the code of today, its escrow back to its requester.
    for (const acc of recordsOf<Account>(fixture, 'cdb-accounts')) f.accounts.set(acc.peer, acc)
    const active = stored.find((r) => r.state === 'active')!
    const requester = active.contract.terms.requester.peer
    const before = account(requester)!
    const closed = await f.book.close(active, { type: 'TERMINATE', by: requester, reason: 'PROVIDER_FAULT' })
    assert.equal(closed.state, 'terminated')
    assert.deepEqual(closed.history.slice(0, -1), active.history)
    assert.deepEqual(account(requester), {
      peer: requester,
      balance: before.balance + active.contract.terms.escrow,
      escrow: before.escrow - active.contract.terms.escrow,
    })
  })

  it('refuses to resume a record in a state it does not know', () => {
    const rec = { state: 'disputing', contract: { terms: { contractId: 'c1' } } } as unknown as ContractRecord
    assert.throws(() => f.book.restore(rec), BadContractRecordError)
  })
})
