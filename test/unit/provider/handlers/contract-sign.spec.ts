/**
 * The contract-sign handler: countersigns terms that match a locked bid, or a bid still only
 * reserved (the lock folded into the contract: the lock's own refusals, then the sign), and
 * refuses anything else; every check runs before anything is locked.
 */
import assert from 'node:assert/strict'
import { waitFor } from 'xstate'
import { codeOf } from '../../../../actors/errors.js'
import { hashDoc, signDoc, verifyDoc } from '../../../../dms/contracts/canonical.js'
import { DOMAIN } from '../../../../dms/contracts/model.js'
import { contractSignHandler } from '../../../../dms/provider/handlers/contract-sign.js'
import { jobRequestHandler } from '../../../../dms/provider/handlers/job-request.js'
import { Harness } from '../../../helpers/provider-harness.js'
import { contracted, contractedBefore, handlers } from './flow.js'

describe('provider/handlers/contract-sign', () => {
  let h: Harness
  let sign: ReturnType<typeof contractSignHandler>
  beforeEach(async () => {
    h = await new Harness().start()
    sign = contractSignHandler({
      book: h.book,
      key: h.provider.key,
      peerId: () => h.provider.peer,
      contractDb: h.contractDb.peer,
    })
  })
  afterEach(() => h.close())

  const lock = (bid: { jobId: string; bidId: string }) =>
    jobRequestHandler({ book: h.book })(h.msg({ jobId: bid.jobId, bidId: bid.bidId }))
  const locked = async () => {
    const bid = await h.bid()
    await lock(bid)
    return bid
  }
  /** The states of the bid's stored records, one per write, from now on. */
  const writes = (bidId: string) => {
    const seen: string[] = []
    h.book.onTransition((rec) => rec.bidId === bidId && seen.push(rec.state))
    return seen
  }

  it('countersigns the terms of a locked bid; the bid is contracted', async () => {
    const bid = await locked()
    const contract = h.contract(bid)
    const { providerSignature } = await sign(h.msg({ contract }))
    assert.ok(verifyDoc(h.provider.key.publicKey, DOMAIN.contract, contract.terms, providerSignature))
    const rec = await h.book.get(bid.bidId)
    assert.equal(rec?.state, 'contracted')
    assert.equal(rec?.snapshot.context.contractId, contract.terms.contractId)
    // The same terms again (a requester restored in `contracting`): the same countersignature.
    assert.deepEqual(await sign(h.msg({ contract })), { providerSignature })
    const other = { ...contract, terms: { ...contract.terms, createdAt: contract.terms.createdAt + 1 } }
    await assert.rejects(sign(h.msg({ contract: other })), { code: 'BID_NOT_OPEN' }, 'other terms')
  })

  it('folded: the terms of a bid still reserved lock it and contract it in one request, one stored record fewer', async () => {
    const folded = await h.bid('job-folded')
    const foldedWrites = writes(folded.bidId)
    const contract = h.contract(folded)
    const { providerSignature } = await sign(h.msg({ contract }, h.requester, 'job/job-folded'))
    assert.ok(verifyDoc(h.provider.key.publicKey, DOMAIN.contract, contract.terms, providerSignature))
    const rec = await h.book.get(folded.bidId)
    assert.equal(rec?.state, 'contracted')
    assert.equal(rec?.snapshot.context.contractHash, hashDoc(contract.terms))
    assert.deepEqual(
      rec?.snapshot.context.history.map((e) => e.state),
      ['reserved', 'locked', 'contracted'],
    )
    const entry = h.ledger.entries().find((e) => e.id === folded.bidId)
    assert.equal(entry?.state, 'locked', 'the ledger holds the lock, until the invocation deadline')
    assert.equal(entry?.expiresAt, h.clock.now() + 60_000)
    // The same terms again: the same countersignature; a job request after it finds no open bid.
    assert.deepEqual(await sign(h.msg({ contract }, h.requester, 'job/job-folded')), { providerSignature })
    await assert.rejects(lock(folded), { code: 'BID_NOT_OPEN', message: 'bid is contracted' })

    // The same through a job request then the sign: one stored record more (`locked`).
    const twoStep = await h.bid('job-two-step')
    const twoStepWrites = writes(twoStep.bidId)
    await lock(twoStep)
    await sign(h.msg({ contract: h.contract(twoStep) }, h.requester, 'job/job-two-step'))
    assert.deepEqual(twoStepWrites, ['locked', 'contracted'])
    assert.deepEqual(foldedWrites, ['contracted'], 'one stored record for the lock and the contract')
  })

  it('folded, then the provider restarted: the bid is restored contracted; the same terms get the same countersignature', async () => {
    const bid = await h.bid()
    const contract = h.contract(bid)
    const { providerSignature } = await sign(h.msg({ contract }))
    await h.restart()
    const signAgain = contractSignHandler({
      book: h.book,
      key: h.provider.key,
      peerId: () => h.provider.peer,
      contractDb: h.contractDb.peer,
    })
    assert.equal((await h.book.get(bid.bidId))?.state, 'contracted')
    assert.equal(h.ledger.entries().find((e) => e.id === bid.bidId)?.state, 'locked')
    // A requester restored in `contracting` sends the same terms: the same countersignature.
    assert.deepEqual(await signAgain(h.msg({ contract })), { providerSignature })
    const other = { ...contract, terms: { ...contract.terms, createdAt: contract.terms.createdAt + 1 } }
    other.requesterSignature = signDoc(h.requester.key, DOMAIN.contract, other.terms)
    await assert.rejects(signAgain(h.msg({ contract: other })), { code: 'BID_NOT_OPEN' })
    // Not invoked, it is released at the invocation deadline counted from the lock.
    const restored = h.book.actor(bid.bidId)!
    await h.clock.advanceAsync(60_000)
    await waitFor(restored, (s) => s.status === 'done')
    assert.deepEqual(h.ledger.entries(), [])
  })

  it('folded: a lock the ledger refuses is refused as the job request refuses it, and the bid ends', async () => {
    const bid = await h.bid()
    const actor = h.book.actor(bid.bidId)!
    h.fakes.failNext.lock = 'RESERVATION_EXPIRED'
    await assert.rejects(sign(h.msg({ contract: h.contract(bid) })), {
      code: 'LOCK_FAILED',
      message: /cannot lock resources: lock failed/,
    })
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(h.ledger.entries(), [], 'the bid ended: its reservation is released')
    assert.equal(actor.getSnapshot().context.contractId, undefined)
  })

  it('folded: every check runs before the lock; a refused sign leaves the bid reserved', async () => {
    await assert.rejects(
      sign(h.msg({ contract: h.contract({ ...(await h.bid('job-x')), bidId: 'nope' }) })),
      {
        code: 'UNKNOWN_BID',
      },
    )
    const bid = await h.bid()
    await assert.rejects(sign(h.msg({ contract: h.contract(bid, h.stranger) }, h.stranger)), {
      code: 'NOT_YOUR_BID',
    })
    const dearer = h.contract(bid)
    dearer.terms.pricePerHour = 1 // a dms 0.1 copy of the price that is not the bid's
    await assert.rejects(sign(h.msg({ contract: dearer })), { code: 'TERMS_MISMATCH' })
    const forged = { ...h.contract(bid), requesterSignature: h.contract(bid, h.stranger).requesterSignature }
    await assert.rejects(sign(h.msg({ contract: forged })), { code: 'BAD_SIGNATURE' })
    assert.equal((await h.book.get(bid.bidId))?.state, 'reserved', 'still open')
    assert.equal(h.ledger.entries().find((e) => e.id === bid.bidId)?.state, 'reserved', 'nothing locked')
  })

  it("countersigns terms that copy none of the bid; refuses copies that are not the bid's and a bid changed to ask for more, before the lock", async () => {
    const bid = await h.bid()
    const plain = h.contract(bid)
    for (const copy of ['resources', 'image', 'maxDurationSeconds']) assert.ok(!(copy in plain.terms))
    const resigned = (terms: typeof plain.terms) => ({
      terms,
      requesterSignature: signDoc(h.requester.key, DOMAIN.contract, terms),
    })
    const more = { ...bid.resources, cpu: bid.resources.cpu * 4 }
    const hostile = [
      // Copies as an earlier version sent them, but not the bid's.
      resigned({ ...plain.terms, resources: more }),
      resigned({ ...plain.terms, image: 'evil:1' }),
      resigned({ ...plain.terms, maxDurationSeconds: bid.maxDurationSeconds * 10 }),
      // No copies, and the embedded bid changed to say more (its signature no longer the provider's).
      resigned({ ...plain.terms, bid: { ...bid, resources: more } }),
      resigned({ ...plain.terms, bid: { ...bid, maxDurationSeconds: bid.maxDurationSeconds * 10 } }),
    ]
    for (const contract of hostile)
      await assert.rejects(
        sign(h.msg({ contract })),
        { code: 'TERMS_MISMATCH' },
        JSON.stringify(contract.terms),
      )
    assert.equal(h.ledger.entries().find((e) => e.id === bid.bidId)?.state, 'reserved', 'nothing locked')
    const { providerSignature } = await sign(h.msg({ contract: plain }))
    assert.ok(verifyDoc(h.provider.key.publicKey, DOMAIN.contract, plain.terms, providerSignature))
    assert.equal((await h.book.get(bid.bidId))?.snapshot.context.contractHash, hashDoc(plain.terms))
    // Copies equal to the bid's (a requester that still sends them) say nothing new: countersigned.
    const other = await h.bid('job-copies')
    const copies = h.contract(other)
    const withCopies = resigned({
      ...copies.terms,
      resources: other.resources,
      image: other.image,
      maxDurationSeconds: other.maxDurationSeconds,
    })
    await sign(h.msg({ contract: withCopies }, h.requester, 'job/job-copies'))
    assert.equal((await h.book.get(other.bidId))?.state, 'contracted')
  })

  it('folded: a bid is locked once (a job request and a sign at the same time: one of them)', async () => {
    const bid = await h.bid()
    const contract = h.contract(bid)
    const [signed, requested] = await Promise.allSettled([sign(h.msg({ contract })), lock(bid)])
    assert.equal(signed.status, 'fulfilled')
    assert.equal(codeOf(requested.status === 'rejected' ? requested.reason : undefined), 'BID_NOT_OPEN')
    // Two signs with different terms at once: the first locks, the second finds no open bid.
    const again = await h.bid('job-2')
    const a = h.contract(again)
    const b = { ...a, terms: { ...a.terms, createdAt: a.terms.createdAt + 1 } }
    b.requesterSignature = signDoc(h.requester.key, DOMAIN.contract, b.terms)
    const results = await Promise.allSettled([
      sign(h.msg({ contract: a }, h.requester, 'job/job-2')),
      sign(h.msg({ contract: b }, h.requester, 'job/job-2')),
    ])
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected'],
    )
    assert.equal(codeOf(results[1].status === 'rejected' ? results[1].reason : undefined), 'BID_NOT_OPEN')
  })

  it('refuses a bid no longer open, terms that differ from the bid, and a forged signature', async () => {
    const expiring = await h.bid('job-open')
    await h.clock.advanceAsync(30_000)
    await assert.rejects(sign(h.msg({ contract: h.contract(expiring) })), {
      code: 'BID_NOT_OPEN',
      message: 'bid is expired',
    })
    const bid = await locked()
    const dearer = h.contract(bid)
    dearer.terms.pricePerHour = 1 // a dms 0.1 copy of the price that is not the bid's
    await assert.rejects(sign(h.msg({ contract: dearer })), { code: 'TERMS_MISMATCH' })
    const forged = { ...h.contract(bid), requesterSignature: h.contract(bid, h.stranger).requesterSignature }
    await assert.rejects(sign(h.msg({ contract: forged })), { code: 'BAD_SIGNATURE' })
    assert.equal((await h.book.get(bid.bidId))?.state, 'locked', 'still waiting for its contract')
  })

  it('countersigns the same terms again once the bid has gone on (invoked, run), and no others', async () => {
    const { bid, contract } = await contracted(h)
    const { providerSignature } = await sign(h.msg({ contract }))
    await handlers(h).invoke(h.msg(h.invocation(contract)))
    assert.notEqual((await h.book.get(bid.bidId))?.state, 'contracted')
    // A requester killed after its contract went on, restored in `contracting`, drafts the same terms.
    assert.deepEqual(await sign(h.msg({ contract })), { providerSignature })
    const other = { ...contract, terms: { ...contract.terms, createdAt: contract.terms.createdAt + 1 } }
    await assert.rejects(sign(h.msg({ contract: other })), { code: 'BID_NOT_OPEN' })
    await assert.rejects(sign(h.msg({ contract }, h.stranger)), { code: 'NOT_YOUR_BID' })
  })

  it("refuses new terms that sign no workload (an older requester), and a workloadHash not of a hash's form, before the lock", async () => {
    const bid = await h.bid()
    await assert.rejects(sign(h.msg({ contract: h.contract(bid, h.requester, false) })), {
      code: 'WORKLOAD_UNSIGNED',
      message: /sign no workload \(workloadHash\): the requester speaks an older protocol; upgrade it/,
    })
    const odd = h.contract(bid)
    odd.terms.workloadHash = 'Z'.repeat(64)
    odd.requesterSignature = signDoc(h.requester.key, DOMAIN.contract, odd.terms)
    await assert.rejects(sign(h.msg({ contract: odd })), { code: 'TERMS_MISMATCH' })
    assert.equal((await h.book.get(bid.bidId))?.state, 'reserved', 'still open')
    assert.equal(h.ledger.entries().find((e) => e.id === bid.bidId)?.state, 'reserved', 'nothing locked')
    // Signed, it is countersigned.
    const { providerSignature } = await sign(h.msg({ contract: h.contract(bid) }))
    assert.ok(verifyDoc(h.provider.key.publicKey, DOMAIN.contract, h.contract(bid).terms, providerSignature))
  })

  it('countersigns again the terms without workloadHash it signed before the upgrade (a restored requester)', async () => {
    const { contract } = await contractedBefore(h)
    const { providerSignature } = await sign(h.msg({ contract }))
    assert.equal(providerSignature, contract.providerSignature)
  })
})
