/**
 * Start notes (handlers/start.ts) on the real contract machine over fakes and a manual clock: the
 * provider's signed note is recorded once and answered the same when repeated; a note from anyone
 * else, or signed by another key, is refused; past startBy the note is refused
 * START_DEADLINE_PASSED and the contract expires at once with a full refund, both parties told.
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../../actors/clock.js'
import { startHandler, type StartHandler } from '../../../../dms/contract-db/handlers/start.js'
import type { SignedContract } from '../../../../dms/contracts/model.js'
import { signStartNote } from '../../../../dms/contracts/start.js'
import { silentLogger } from '../../../../dms/log.js'
import { fakeContracts, proposeActive, refusal, type FakeContracts } from '../../../helpers/contract-db.js'
import { makeContract, newParty } from '../../../helpers/contracts.js'

const T0 = 1_800_000_000_000
const START_BY = T0 + 120_000

describe('contract-db/handlers/start (the provider start note)', () => {
  const req = newParty()
  const prov = newParty()
  let f: FakeContracts
  let start: StartHandler
  let c: SignedContract

  beforeEach(async () => {
    f = fakeContracts(new ManualClock(T0))
    f.accounts.set(req.peer, { peer: req.peer, balance: 100, escrow: 0 })
    start = startHandler({ contracts: f.closable, clock: f.clock, self: 'cdb', log: silentLogger })
    c = makeContract(req, prov, 'cdb', {
      now: T0,
      pricePerHour: 3600,
      maxDurationSeconds: 60,
      startBy: START_BY,
    })
    await proposeActive(f, c, { escrowLocked: 60 })
  })
  const note = (at = f.clock.now(), who = prov) => signStartNote(who.key, who.peer, c.terms.contractId, at)

  it('records the note once, moves no money, and answers a repeat with the same start', async () => {
    f.clock.advance(5000)
    const ack = await start(prov.peer, note())
    assert.deepEqual(ack, { contractId: c.terms.contractId, startedAt: T0 + 5000 })
    const rec = f.records.get(c.terms.contractId)!
    assert.equal(rec.state, 'active')
    assert.equal(rec.started?.at, T0 + 5000)
    assert.deepEqual(f.accounts.get(req.peer), { peer: req.peer, balance: 40, escrow: 60 })
    const commits = f.commits.length
    // A lost answer: the note is sent again, later (even past startBy), and gets the same answer.
    f.clock.advance(START_BY)
    assert.deepEqual(await start(prov.peer, note()), ack)
    assert.equal(f.commits.length, commits, 'nothing written twice')
  })

  it('refuses a note from another peer, for another provider, or signed by another key', async () => {
    assert.equal((await refusal(start(req.peer, note()))).code, 'NOT_A_PARTY')
    const stranger = newParty()
    assert.equal((await refusal(start(stranger.peer, note(T0, stranger)))).code, 'NOT_A_PARTY')
    const forged = { ...note(), signature: note(T0, stranger).signature }
    assert.equal((await refusal(start(prov.peer, forged))).code, 'BAD_SIGNATURE')
    const unknown = signStartNote(prov.key, prov.peer, 'no-such-contract', T0)
    assert.equal((await refusal(start(prov.peer, unknown))).code, 'UNKNOWN_CONTRACT')
    assert.equal(f.records.get(c.terms.contractId)?.started, undefined)
  })

  it('past startBy: refused START_DEADLINE_PASSED, the contract expires with a full refund, both told', async () => {
    f.clock.advance(START_BY - T0 + 1)
    const r = await refusal(start(prov.peer, note()))
    assert.equal(r.code, 'START_DEADLINE_PASSED')
    const rec = f.records.get(c.terms.contractId)!
    assert.deepEqual([rec.state, rec.closedBy, rec.detail], ['expired', 'cdb', 'not started by startBy'])
    assert.deepEqual([rec.settlement?.paidToProvider, rec.settlement?.refundedToRequester], [0, 60])
    assert.deepEqual(f.accounts.get(req.peer), { peer: req.peer, balance: 100, escrow: 0 })
    assert.deepEqual(
      f.notices.map((n) => n.closedBy),
      ['cdb'],
      'notified (the service tells both parties of an expiry)',
    )
    // Sent again: still refused with the same code, nothing more written.
    const commits = f.commits.length
    assert.equal((await refusal(start(prov.peer, note()))).code, 'START_DEADLINE_PASSED')
    assert.equal(f.commits.length, commits)
  })

  it('a closed contract is not started', async () => {
    await f.book.close(f.records.get(c.terms.contractId)!, {
      type: 'TERMINATE',
      by: req.peer,
      reason: 'REQUESTER_CANCELLED',
    })
    assert.equal((await refusal(start(prov.peer, note()))).code, 'CONTRACT_NOT_ACTIVE')
  })

  it('a repeated note is refused once the started contract was terminated (the run may not go on)', async () => {
    await start(prov.peer, note())
    await f.book.close(f.records.get(c.terms.contractId)!, {
      type: 'TERMINATE',
      by: req.peer,
      reason: 'REQUESTER_CANCELLED',
    })
    const r = await refusal(start(prov.peer, note()))
    assert.equal(r.code, 'CONTRACT_NOT_ACTIVE')
    assert.equal((r.data as { state: string }).state, 'terminated')
  })
})
