/**
 * The contract-db verifier service over a real level db and a real libp2p host: what it accepts,
 * what it refuses (with which code and reason), and exactly what money moves.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { contractIdFor } from '../../../dms/contracts/contract-id.js'
import { DEADLINES } from '../../../dms/contract-db/deadlines.js'
import type { RemoteError } from '../../../actors/errors.js'
import { hashDoc, signDoc, verifyDoc } from '../../../dms/contracts/canonical.js'
import { DOMAIN, type SignedContract } from '../../../dms/contracts/model.js'
import { publicKeyOfPeer } from '../../../dms/contracts/party.js'
import { ContractDbService } from '../../../dms/contract-db/service.js'
import { silentLogger } from '../../../dms/log.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { INBOX } from '../../../dms/protocol/handles.js'
import { signStartNote } from '../../../dms/contracts/start.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import {
  makeContract,
  makeReceipt,
  makeSettle,
  makeVerification,
  newParty,
  sign,
  type Who,
} from '../../helpers/contracts.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'

/** Asserts a refusal with `code` and a message matching `why`. */
function expectRefused(r: { code: string; message: string }, code: string, why: RegExp): void {
  assert.equal(r.code, code, r.message)
  assert.match(r.message, why)
}

/** Resolves with the refusal's code, message and data (fails the test if it did not refuse). */
async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; data?: unknown }> {
  try {
    await p
  } catch (err) {
    const e = err as { code: string; message: string; data?: unknown }
    return { code: e.code, message: e.message, data: e.data }
  }
  assert.fail('expected a refusal')
}

describe('contract-db service', function () {
  this.timeout(20_000)
  let dir: string
  let db: Db
  let peer: TestPeer
  let svc: ContractDbService
  let clock: ManualClock
  let req: Who
  let prov: Who
  let cdb: string

  const open = async () => {
    db = await openDb(join(dir, 'db'))
    svc = new ContractDbService({ system: peer.system, key: peer.key, db, clock, log: silentLogger })
  }
  const contract = (o: Parameters<typeof makeContract>[3] = {}) =>
    makeContract(req, prov, cdb, { now: clock.now(), ...o })

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-cdb-'))
    peer = await startPeer()
    cdb = peer.system.peerId
    clock = new ManualClock(Date.now())
    await open()
    req = newParty()
    prov = newParty()
    await svc.approve(req.peer)
    await svc.approve(prov.peer)
    await svc.credit(req.peer, 1000)
  })
  afterEach(async () => {
    svc.stop()
    await db.close()
    await peer.stop()
    await rm(dir, { recursive: true, force: true })
  })

  describe('deadlines', () => {
    it('expires an active contract nobody closed by settleBy + the claim window: a full refund, on its timer', async () => {
      const c = contract({ pricePerHour: 3600, maxDurationSeconds: 60 })
      const proof = await svc.verify(req.peer, c)
      assert.equal(proof.settleBy, proof.issuedAt + 60_000 + DEADLINES.settleGraceMs)
      const settled = contract()
      await svc.verify(req.peer, settled)
      await svc.settle(req.peer, makeSettle(settled, req, prov, { wallSeconds: 0 }))
      assert.deepEqual(await svc.expireDue(), [], 'not before its time')
      svc.start()
      await clock.advanceAsync(proof.settleBy + DEADLINES.claimWindowMs - clock.now() + 60_000)
      await svc.expireDue() // waits for the sweep the timer started (one queue)
      const rec = await svc.contract(c.terms.contractId)
      assert.deepEqual(
        [rec?.state, rec?.settlement?.reason, rec?.settlement?.refundedToRequester, rec?.closedBy],
        ['expired', 'EXPIRED', 60, cdb],
      )
      assert.equal((await svc.contract(settled.terms.contractId))?.state, 'settled')
      assert.deepEqual(await svc.account(req.peer), { peer: req.peer, balance: 1000, escrow: 0 })
      svc.stop()
    })

    it('expires a contract with no start note by its startBy (full refund); a started one runs on', async () => {
      const startBy = clock.now() + 120_000
      const idle = contract({ pricePerHour: 3600, maxDurationSeconds: 60, startBy })
      const started = contract({ pricePerHour: 3600, maxDurationSeconds: 60, startBy })
      await svc.verify(req.peer, idle)
      const proof = await svc.verify(req.peer, started)
      assert.equal(proof.settleBy, startBy + 60_000 + DEADLINES.settleGraceMs, 'settleBy counts from startBy')
      const ack = await svc.started(
        prov.peer,
        signStartNote(prov.key, prov.peer, started.terms.contractId, 1),
      )
      assert.equal(ack.startedAt, clock.now())
      clock.advance(120_000)
      assert.deepEqual(await svc.expireDue(), [], 'not before startBy has passed')
      clock.advance(1)
      const expired = await svc.expireDue()
      assert.deepEqual(
        expired.map((r) => [
          r.contract.terms.contractId,
          r.state,
          r.detail,
          r.settlement?.refundedToRequester,
        ]),
        [[idle.terms.contractId, 'expired', 'not started by startBy', 60]],
      )
      assert.equal((await svc.contract(started.terms.contractId))?.state, 'active')
      assert.deepEqual(await svc.account(req.peer), { peer: req.peer, balance: 940, escrow: 60 })
      // Its provider learns it on its start note: refused, nothing started.
      const late = signStartNote(prov.key, prov.peer, idle.terms.contractId, clock.now())
      assert.equal((await refusal(svc.started(prov.peer, late))).code, 'START_DEADLINE_PASSED')
    })
  })

  describe('verify', () => {
    it('counts active volunteer contracts per requester on the stored records, across a restart', async () => {
      const self = (n: number) =>
        makeContract(req, req, cdb, { now: clock.now() + n, pricePerHour: 0, minJobPrice: 0 })
      const vols = Array.from({ length: 16 }, (_, i) => self(i))
      for (const v of vols) await svc.verify(req.peer, v)
      assert.equal((await refusal(svc.verify(req.peer, self(99)))).code, 'TOO_MANY_CONTRACTS')
      await svc.terminate(req.peer, { contractId: vols[0].terms.contractId, reason: 'PROVIDER_FAULT' })
      await svc.verify(req.peer, self(100))
      await db.close()
      await open()
      assert.equal((await refusal(svc.verify(req.peer, self(101)))).code, 'TOO_MANY_CONTRACTS')
    })

    it('locks escrow = price x max duration and returns a proof signed over the terms', async () => {
      const c = contract({ pricePerHour: 3600, maxDurationSeconds: 60 })
      assert.equal(c.terms.escrow, 60)
      const proof = await svc.verify(req.peer, c)
      const { signature, ...body } = proof
      assert.ok(verifyDoc(publicKeyOfPeer(cdb)!, DOMAIN.proof, body, signature))
      assert.equal(proof.termsHash, hashDoc(c.terms))
      assert.equal(proof.escrowLocked, 60)
      assert.deepEqual(await svc.account(req.peer), { peer: req.peer, balance: 940, escrow: 60 })
      assert.equal((await svc.contract(c.terms.contractId))?.state, 'active')
    })

    it('refuses forged signatures: requester, provider, and the embedded bid', async () => {
      const c = contract()
      const forgedReq = { ...c, requesterSignature: signDoc(newParty().key, DOMAIN.contract, c.terms) }
      expectRefused(await refusal(svc.verify(req.peer, forgedReq)), 'BAD_SIGNATURE', /requester signature/)
      const forgedProv = { ...c, providerSignature: signDoc(req.key, DOMAIN.contract, c.terms) }
      expectRefused(await refusal(svc.verify(req.peer, forgedProv)), 'BAD_SIGNATURE', /provider signature/)
      // Both parties sign terms whose bid the provider never signed (the requester made it up).
      const bid = { ...c.terms.bid, signature: signDoc(req.key, DOMAIN.bid, { x: 1 }) }
      const made = sign({ ...c.terms, bid }, req, prov)
      expectRefused(await refusal(svc.verify(req.peer, made)), 'BAD_TERMS', /not signed by its provider/)
      assert.deepEqual(await svc.account(req.peer), { peer: req.peer, balance: 1000, escrow: 0 })
    })

    it("verifies terms that copy none of the bid (this version): what was bid for is the signed bid's, which the requester cannot change", async () => {
      const c = contract({ pricePerHour: 3600, maxDurationSeconds: 60 })
      assert.ok(!('resources' in c.terms) && !('image' in c.terms) && !('maxDurationSeconds' in c.terms))
      // A bid the requester changed to ask for more: the provider never signed it.
      const bigger = { ...c.terms.bid, resources: { ...c.terms.bid.resources, cpu: 8 } }
      const smuggled = sign({ ...c.terms, bid: bigger }, req, prov)
      expectRefused(await refusal(svc.verify(req.peer, smuggled)), 'BAD_TERMS', /not signed by its provider/)
      // A copy of other resources beside a bid without: the copy must equal the bid's.
      const copied = sign({ ...c.terms, resources: bigger.resources }, req, prov)
      expectRefused(await refusal(svc.verify(req.peer, copied)), 'BAD_TERMS', /resources differ/)
      // The terms themselves: locked, and the deadline counted from the bid's max duration.
      const proof = await svc.verify(req.peer, c)
      assert.equal(proof.escrowLocked, 60)
      assert.equal(proof.settleBy, proof.issuedAt + 60_000 + DEADLINES.settleGraceMs)
      const rec = await svc.contract(c.terms.contractId)
      assert.equal(rec?.state, 'active')
      assert.equal(hashDoc(rec?.contract.terms), hashDoc(c.terms), 'stored as signed')
    })

    it('refuses terms of an earlier version whose copies differ from the signed bid, and any escrow but its total', async () => {
      const c = contract({ pricePerHour: 3600, maxDurationSeconds: 60, copies: true })
      const cases: Array<[Partial<SignedContract['terms']>, RegExp]> = [
        [{ pricePerHour: 1 }, /price 1\/hour differs from the bid's 3600/],
        [{ maxDurationSeconds: 6000 }, /max duration 6000s differs/],
        [{ image: 'other:1' }, /image other:1 differs/],
        [{ resources: { ...c.terms.bid.resources, cpu: 8 } }, /resources differ/],
        [{ escrow: 1 }, /escrow 1 must equal price × max duration \(60\)/],
        [{ jobId: 'another-job' }, /differs from the bid's job/],
      ]
      for (const [change, why] of cases) {
        const t = { ...c.terms, ...change }
        t.contractId = contractIdFor({
          requester: req.peer,
          jobId: t.jobId,
          bidId: t.bidId,
          createdAt: t.createdAt,
        })
        const r = await refusal(svc.verify(req.peer, sign(t, req, prov)))
        expectRefused(r, 'BAD_TERMS', why)
      }
    })

    it('refuses an expired contract, a replayed one, and one submitted by someone else', async () => {
      const expired = contract({ expiresAt: clock.now() - 1 })
      assert.equal((await refusal(svc.verify(req.peer, expired))).code, 'CONTRACT_EXPIRED')
      const c = contract()
      assert.equal((await refusal(svc.verify(prov.peer, c))).code, 'NOT_A_PARTY')
      const proof = await svc.verify(req.peer, c)
      // Sent again (its answer lost): the stored proof, locked once.
      assert.deepEqual(await svc.verify(req.peer, c), proof)
      assert.deepEqual(
        await svc.account(req.peer),
        { peer: req.peer, balance: 940, escrow: 60 },
        'locked once',
      )
      await svc.terminate(req.peer, { contractId: c.terms.contractId, reason: 'PROVIDER_FAULT' })
      const again = await refusal(svc.verify(req.peer, c))
      expectRefused(again, 'CONTRACT_EXISTS', /already submitted/)
    })

    it('refuses unapproved and revoked parties, naming them', async () => {
      const stranger = newParty()
      const r = await refusal(svc.verify(req.peer, makeContract(req, stranger, cdb, { now: clock.now() })))
      expectRefused(r, 'PARTY_NOT_APPROVED', new RegExp(`provider ${stranger.peer} is not an approved`))
      assert.equal(await svc.revoke(prov.peer), true)
      assert.equal((await refusal(svc.verify(req.peer, contract()))).code, 'PARTY_NOT_APPROVED')
      await svc.approve(prov.peer)
      await svc.verify(req.peer, contract())
    })

    it('refuses insufficient funds with the exact shortfall, moving nothing', async () => {
      const c = contract({ pricePerHour: 3_600_000, maxDurationSeconds: 2 }) // escrow 2000
      const r = await refusal(svc.verify(req.peer, c))
      assert.equal(r.code, 'INSUFFICIENT_FUNDS')
      assert.match(r.message, /short of escrow 2000 by 1000/)
      assert.deepEqual(r.data, { shortfall: 1000, balance: 1000, escrow: 2000 })
      assert.deepEqual(await svc.account(req.peer), { peer: req.peer, balance: 1000, escrow: 0 })
      assert.equal(await svc.contract(c.terms.contractId), undefined)
    })

    it('verifies a volunteer job (price 0) without escrow or funds, and settles it paying nothing', async () => {
      const poor = newParty()
      await svc.approve(poor.peer)
      const c = makeContract(poor, prov, cdb, { now: clock.now(), pricePerHour: 0, minJobPrice: 0 })
      assert.equal(c.terms.escrow, 0)
      const proof = await svc.verify(poor.peer, c)
      assert.equal(proof.escrowLocked, 0)
      const s = await svc.settle(poor.peer, makeSettle(c, poor, prov))
      assert.deepEqual([s.outcome, s.paidToProvider, s.refundedToRequester], ['settled', 0, 0])
      assert.deepEqual(await svc.listAccounts().then((a) => a.map((x) => x.peer)), [req.peer].sort())
    })
  })

  describe('settle', () => {
    it('pays min(usage x price, escrow) to the provider, refunds the rest, signed for both', async () => {
      const c = contract({ pricePerHour: 3600, maxDurationSeconds: 60 })
      await svc.verify(req.peer, c)
      clock.advance(11_000) // the contract-db bills no more time than it observed
      const s = await svc.settle(req.peer, makeSettle(c, req, prov, { wallSeconds: 10.2 }))
      assert.deepEqual(
        [s.outcome, s.paidToProvider, s.refundedToRequester, s.billedSeconds],
        ['settled', 11, 49, 10.2],
      )
      const { signature, ...body } = s
      assert.ok(verifyDoc(publicKeyOfPeer(cdb)!, DOMAIN.settlement, body, signature))
      assert.deepEqual(await svc.account(req.peer), { peer: req.peer, balance: 989, escrow: 0 })
      assert.deepEqual(await svc.account(prov.peer), { peer: prov.peer, balance: 11, escrow: 0 })
    })

    it('settles once: a replay is refused and carries the stored settlement', async () => {
      const c = contract()
      await svc.verify(req.peer, c)
      clock.advance(60_000)
      const request = makeSettle(c, req, prov)
      const [a, b] = await Promise.allSettled([svc.settle(req.peer, request), svc.settle(prov.peer, request)])
      assert.equal(a.status, 'fulfilled')
      assert.equal(b.status, 'rejected')
      const r = await refusal(svc.settle(req.peer, request))
      assert.equal(r.code, 'CONTRACT_NOT_ACTIVE')
      assert.deepEqual(
        (r.data as { settlement: unknown }).settlement,
        (a as PromiseFulfilledResult<unknown>).value,
      )
      assert.equal((await svc.account(prov.peer)).balance, 10, 'paid once')
    })

    it('bills by status: completed pays at least the minimum job price, a run that never started nothing, usage is capped at max duration', async () => {
      const cases: Array<[Parameters<typeof makeSettle>[3], number]> = [
        [{ wallSeconds: 1, status: 'completed' }, 30], // minimum job price
        [{ wallSeconds: 1, status: 'failed', exitCode: 3 }, 1], // the program failed: usage
        [{ wallSeconds: 0, status: 'failed', exitCode: -1 }, 0], // never started: provider's problem
        [{ wallSeconds: 500, status: 'timed_out', exitCode: 137 }, 60], // capped at max duration
        [{ wallSeconds: 45, status: 'cancelled', exitCode: 137 }, 45],
      ]
      for (const [how, paid] of cases) {
        const c = contract({ pricePerHour: 3600, maxDurationSeconds: 60, minJobPrice: 30 })
        await svc.verify(req.peer, c)
        clock.advance(600_000)
        const s = await svc.settle(req.peer, makeSettle(c, req, prov, how))
        assert.equal(s.paidToProvider, paid, JSON.stringify(how))
        assert.equal(s.refundedToRequester, 60 - paid)
      }
    })

    it('lets either party settle, and refuses a third party', async () => {
      const c = contract()
      await svc.verify(req.peer, c)
      const r = await refusal(svc.settle(newParty().peer, makeSettle(c, req, prov)))
      expectRefused(r, 'NOT_A_PARTY', /is not a party/)
      const s = await svc.settle(prov.peer, makeSettle(c, req, prov)) // with the requester's signed verdict
      assert.equal(s.outcome, 'settled')
    })

    it('refuses a forged receipt, a malformed receipt, a forged or mismatched verification', async () => {
      const c = contract()
      await svc.verify(req.peer, c)
      const good = makeSettle(c, req, prov)
      const forgedReceipt = makeReceipt(c, req) // signed by the requester, not the provider
      const cases: Array<[unknown, string, RegExp]> = [
        [
          { ...good, receipt: forgedReceipt, verification: makeVerification(c, forgedReceipt, req) },
          'BAD_SIGNATURE',
          /receipt is not signed by the provider/,
        ],
        [
          { ...good, receipt: { ...good.receipt, receipt: { ...good.receipt.receipt, status: 'done' } } },
          'BAD_RECEIPT',
          /unknown receipt status/,
        ],
        [
          {
            ...good,
            receipt: { ...good.receipt, receipt: { ...good.receipt.receipt, usage: { wallSeconds: -5 } } },
          },
          'BAD_RECEIPT',
          /usage/,
        ],
        [
          { ...good, verification: makeVerification(c, good.receipt, prov) },
          'BAD_SIGNATURE',
          /verification is not signed by the requester/,
        ],
        [
          { ...good, verification: makeVerification(c, makeReceipt(c, prov), req) },
          'BAD_VERIFICATION',
          /another receipt/,
        ],
        [{ ...good, contractId: 'nope' }, 'UNKNOWN_CONTRACT', /no contract nope/],
      ]
      for (const [request, code, why] of cases)
        expectRefused(await refusal(svc.settle(req.peer, request as never)), code, why)
      assert.equal((await svc.contract(c.terms.contractId))?.state, 'active', 'nothing closed it')
      await svc.settle(req.peer, good)
    })

    it('a rejection is checked by the arbiter outside the queue, then settled on what it found', async () => {
      const asked: string[] = []
      let decide: (outcome: 'overruled' | 'upheld') => void = () => {}
      svc.stop()
      svc = new ContractDbService({
        system: peer.system,
        key: peer.key,
        db,
        clock,
        log: silentLogger,
        arbiter: () => ({
          budgetMs: () => 0,
          check: (terms, receipt) => {
            asked.push(`${terms.contractId} ${receipt.receipt.contractId}`)
            return new Promise((resolve) => {
              decide = (outcome) => resolve({ outcome, reason: 'checked', at: clock.now() })
            })
          },
        }),
      })
      svc.start()
      const c = contract()
      await svc.verify(req.peer, c)
      // A verified settle and a malformed rejection are never sent to the arbiter.
      const badSig = makeSettle(c, req, prov, { verified: false })
      badSig.verification.signature = badSig.verification.signature.replace(/^./, (ch) =>
        ch === 'A' ? 'B' : 'A',
      )
      expectRefused(await refusal(svc.settle(req.peer, badSig)), 'BAD_SIGNATURE', /verification/)
      assert.deepEqual(asked, [])
      clock.advance(20_000) // the run's 10 s fit in the time the contract-db saw
      const settling = svc.settle(req.peer, makeSettle(c, req, prov, { verified: false, wallSeconds: 10 }))
      while (asked.length === 0) await new Promise((r) => setImmediate(r))
      assert.deepEqual(asked, [`${c.terms.contractId} ${c.terms.contractId}`])
      // Meanwhile the queue serves other contracts.
      const other = contract()
      await svc.verify(req.peer, other)
      decide('overruled')
      const s = await settling
      assert.deepEqual([s.outcome, s.reason, s.paidToProvider], ['settled', 'REJECTION_OVERRULED', 10])
      assert.deepEqual((await svc.contract(c.terms.contractId))?.arbitration, {
        outcome: 'overruled',
        reason: 'checked',
        at: clock.now(),
      })
      // Upheld: refunded.
      const s2 = svc.settle(req.peer, makeSettle(other, req, prov, { verified: false }))
      while (asked.length === 1) await new Promise((r) => setImmediate(r))
      decide('upheld')
      assert.deepEqual(
        [(await s2).outcome, (await s2).reason, (await s2).paidToProvider],
        ['terminated', 'REQUESTER_REJECTED_RESULT', 0],
      )
    })

    it('a negative verification terminates the contract and refunds the whole escrow', async () => {
      const c = contract()
      await svc.verify(req.peer, c)
      const s = await svc.settle(req.peer, makeSettle(c, req, prov, { verified: false }))
      assert.deepEqual(
        [s.outcome, s.reason, s.paidToProvider, s.refundedToRequester],
        ['terminated', 'REQUESTER_REJECTED_RESULT', 0, 60],
      )
      assert.deepEqual(await svc.account(req.peer), { peer: req.peer, balance: 1000, escrow: 0 })
    })
  })

  describe('terminate', () => {
    it('provider fault refunds the requester; the contract cannot be settled afterwards', async () => {
      const c = contract()
      await svc.verify(req.peer, c)
      const s = await svc.terminate(req.peer, {
        contractId: c.terms.contractId,
        reason: 'PROVIDER_FAULT',
        detail: 'silent',
      })
      assert.deepEqual(
        [s.outcome, s.reason, s.paidToProvider, s.refundedToRequester],
        ['terminated', 'PROVIDER_FAULT', 0, 60],
      )
      assert.deepEqual(await svc.account(req.peer), { peer: req.peer, balance: 1000, escrow: 0 })
      assert.equal(
        (await refusal(svc.settle(prov.peer, makeSettle(c, req, prov)))).code,
        'CONTRACT_NOT_ACTIVE',
      )
    })

    it('requester cancel pays the time used since escrow was locked, or the receipt usage', async () => {
      const c = contract({ pricePerHour: 3600, maxDurationSeconds: 60 })
      await svc.verify(req.peer, c)
      clock.advance(20_000)
      const s = await svc.terminate(req.peer, {
        contractId: c.terms.contractId,
        reason: 'REQUESTER_CANCELLED',
      })
      assert.deepEqual([s.paidToProvider, s.refundedToRequester, s.billedSeconds], [20, 40, 20])
      const d = contract({ pricePerHour: 3600, maxDurationSeconds: 60 })
      await svc.verify(req.peer, d)
      clock.advance(8_000)
      const receipt = makeReceipt(d, prov, { wallSeconds: 7, status: 'cancelled' })
      const t = await svc.terminate(req.peer, {
        contractId: d.terms.contractId,
        reason: 'REQUESTER_CANCELLED',
        receipt,
      })
      assert.equal(t.paidToProvider, 7)
    })

    it('refuses a provider "cancelling" for the requester, unknown reasons and third parties', async () => {
      const c = contract()
      await svc.verify(req.peer, c)
      const id = c.terms.contractId
      assert.equal(
        (await refusal(svc.terminate(prov.peer, { contractId: id, reason: 'REQUESTER_CANCELLED' }))).code,
        'BAD_REASON',
      )
      assert.equal(
        (await refusal(svc.terminate(req.peer, { contractId: id, reason: 'BORED' as never }))).code,
        'BAD_REASON',
      )
      assert.equal(
        (await refusal(svc.terminate(newParty().peer, { contractId: id, reason: 'PROVIDER_FAULT' }))).code,
        'NOT_A_PARTY',
      )
      const s = await svc.terminate(prov.peer, { contractId: id, reason: 'PROVIDER_FAULT' })
      assert.equal(s.refundedToRequester, 60)
    })
  })

  it('restarts with nothing lost: an active contract settles after the db is reopened', async () => {
    const c = contract()
    await svc.verify(req.peer, c)
    await db.close()
    await open()
    assert.deepEqual(await svc.account(req.peer), { peer: req.peer, balance: 940, escrow: 60 })
    const s = await svc.settle(req.peer, makeSettle(c, req, prov))
    assert.equal(s.paidToProvider + s.refundedToRequester, 60)
    assert.equal(
      (await svc.contract(c.terms.contractId))?.history.map((h) => h.state).join(),
      'active,settled',
    )
  })

  it('over the network: the caller is the envelope sender, so a third party cannot settle', async () => {
    svc.start()
    const stranger = await startPeer(peer.transport.addrs().map((a) => `${a}/p2p/${cdb}`))
    try {
      const c = contract()
      await svc.verify(req.peer, c)
      const actor = stranger.system.spawn('test', stranger.key)
      const to = {
        publicKey: peer.key.publicKey,
        peer: cdb,
        inbox: INBOX.contractDb,
        addrs: peer.transport.addrs(),
      }
      const err = await refusal(actor.request(to as never, W.settle, makeSettle(c, req, prov)))
      assert.equal(err.code, 'NOT_A_PARTY')
      await assert.rejects(
        actor.request(to as never, W.contractVerify, { contract: c }),
        (e: RemoteError) => e.code === 'NOT_A_PARTY',
      )
    } finally {
      await stranger.stop()
    }
  })
})
