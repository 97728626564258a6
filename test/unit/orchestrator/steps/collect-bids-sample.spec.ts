/**
 * The `bidding` step with many subscribers, on a simulated clock: the request goes directly to a
 * per-job sample of them (bid-sample.ts), never on gossip while the sample brings enough bids; it
 * is widened (twice as many, then gossip to everyone) while too few bid, but not when its window
 * closed on stragglers with a bid in hand; a silent sample holds a window only to its deadline;
 * `bidSample: 0` keeps the old broadcast.
 */
import assert from 'node:assert/strict'
import type { Handle } from '../../../../actors/envelope.js'
import { BidAudience } from '../../../../dms/orchestrator/bid-audience.js'
import { sampleOrder } from '../../../../dms/orchestrator/bid-sample.js'
import { collectBidsStep } from '../../../../dms/orchestrator/steps/collect-bids.js'
import { W } from '../../../../dms/protocol/behaviours.js'
import { handleOf, INBOX } from '../../../../dms/protocol/handles.js'
import type { BidRequest } from '../../../../dms/protocol/messages.js'
import { newParty, type Who } from '../../../helpers/contracts.js'
import { CONFIG, jobRecord, never, outcome, signedBid, stepDeps, T0 } from '../../../helpers/steps.js'

describe('orchestrator/steps/collect-bids: the bid sample', () => {
  const parties: Who[] = Array.from({ length: 40 }, () => newParty())
  const byPeer = new Map(parties.map((p) => [p.peer, p]))
  const all = parties.map((p) => p.peer)

  /** The fakes with 40 subscribers, each answering a direct request with `answer(peer)`. */
  function net(answer: (peer: string) => 'bid' | 'decline' | 'silent', config = CONFIG) {
    const f = stepDeps({ config })
    f.transport.subscribers = [...all]
    const reply = (req: BidRequest, peer: string) => {
      const a = answer(peer)
      if (a === 'bid')
        f.session.addBid(signedBid(byPeer.get(peer)!, req.jobId), handleOf(peer, INBOX.provider))
      if (a === 'decline')
        f.session.addDecline({ jobId: req.jobId, provider: peer, reasons: ['insufficient cpu'] })
    }
    f.actor.onSend = (req: BidRequest, to: Handle) => reply(req, to.peer)
    f.actor.onPublish = (req: BidRequest) => {
      for (const peer of f.transport.subscribers) reply(req, peer)
    }
    return f
  }

  it('asks only the first 8 of the job order, directly, and never publishes once they bid', async () => {
    const f = net(() => 'bid')
    const job = jobRecord()
    const patch = await collectBidsStep(f.deps)(job, never())
    const direct = f.actor.of(W.directBidRequest)
    assert.deepEqual(
      direct.map((s) => s.to?.peer),
      sampleOrder(job.id, all, () => false).slice(0, 8),
    )
    assert.ok(direct.every((s) => s.to?.inbox === INBOX.provider))
    assert.equal(f.actor.of(W.bidRequest).length, 0, 'nothing on gossip')
    assert.equal(patch.bids?.length, 8, 'all of the sample bid at once; nobody else was asked')
    assert.equal(f.clock.now(), T0, 'closed on enough bids, without waiting')
  })

  it('widens while fewer than enoughBids bid: 8 directly, then gossip to everyone once a batch would be half of the rest', async () => {
    const job = jobRecord()
    const order = sampleOrder(job.id, all, () => false)
    // Only the 3rd and the 30th peer of the order can take it: one bid from the sample.
    const f = net((peer) => (peer === order[2] || peer === order[29] ? 'bid' : 'decline'))
    const patch = await collectBidsStep(f.deps)(job, never())
    const direct = f.actor.of(W.directBidRequest).map((s) => s.to?.peer)
    assert.deepEqual(direct, order.slice(0, 8), 'a batch of 8 (16 would be half of the 32 left)')
    assert.equal(f.actor.of(W.bidRequest).length, 1, 'then one publish to everyone')
    assert.deepEqual(new Set(patch.bids?.map((b) => b.provider)), new Set([order[2], order[29]]))
    assert.equal(f.clock.now(), T0, 'every window closed when all its audience had answered')
  })

  it('with 100 subscribers: batches of 8, 16 and 32 directly before the gossip', async () => {
    const more = Array.from({ length: 60 }, () => newParty())
    for (const p of more) byPeer.set(p.peer, p)
    const hundred = [...all, ...more.map((p) => p.peer)]
    const job = jobRecord()
    const order = sampleOrder(job.id, hundred, () => false)
    const f = net((peer) => (peer === order[70] ? 'bid' : 'decline'))
    f.transport.subscribers = hundred
    await collectBidsStep(f.deps)(job, never())
    assert.deepEqual(
      f.actor.of(W.directBidRequest).map((s) => s.to?.peer),
      order.slice(0, 56),
    )
    assert.equal(f.actor.of(W.bidRequest).length, 1)
  })

  it('keeps the excluded providers out of the sample', async () => {
    const f = net(() => 'bid')
    const job = jobRecord({ excluded: [all[0], all[1]] })
    job.spec.providers.deny = [all[2]]
    await collectBidsStep(f.deps)(job, never())
    const asked = f.actor.of(W.directBidRequest).map((s) => s.to?.peer)
    assert.equal(asked.length, 8)
    assert.ok(!asked.some((p) => p === all[0] || p === all[1] || p === all[2]))
    assert.deepEqual(asked, sampleOrder(job.id, all.slice(3), () => false).slice(0, 8))
  })

  it('a silent sample holds its window to its deadline, and silent providers drop to the end of later samples', async () => {
    const job = jobRecord()
    const mute = new Set(sampleOrder(job.id, all, () => false).slice(0, 8))
    const f = net((peer) => (mute.has(peer) ? 'silent' : 'bid'))
    f.deps.audience = new BidAudience({ silentAfter: 1 })
    let ended = false
    const step = outcome(collectBidsStep(f.deps)(job, never())).finally(() => (ended = true))
    while (!ended) await f.clock.advanceAsync(CONFIG.bidWindowMs)
    const { value } = await step
    assert.equal(
      f.clock.now(),
      T0 + CONFIG.bidWindowMs,
      "the sample's window ran to its deadline, the gossip one closed at once",
    )
    assert.equal(value?.bids?.length, 32, 'everyone else bid on the gossip')
    // The next job asks the answering providers first: the silent ones come last.
    const g = f.actor.sent.length
    await collectBidsStep(f.deps)(jobRecord({ id: 'job-2' }), never())
    const next = f.actor.sent.slice(g).filter((s) => s.behaviour === W.directBidRequest.name)
    assert.equal(next.length, 8)
    assert.ok(next.every((s) => !mute.has(s.to!.peer)))
  })

  it('a sample window closed on stragglers with a bid in hand goes on with it: no wider ask', async () => {
    const job = jobRecord()
    const order = sampleOrder(job.id, all, () => false)
    // One of the sample bids at once; the other seven are slow (they never answer here).
    const f = net((peer) => (peer === order[0] ? 'bid' : 'silent'))
    const done = outcome(collectBidsStep(f.deps)(job, never()), f.clock)
    await f.clock.advanceAsync(f.deps.audience.stragglerMs)
    const { value, at } = await done
    assert.equal(at, T0 + f.deps.audience.stragglerMs, 'closed on stragglers')
    assert.deepEqual(
      value?.bids?.map((b) => b.provider),
      [order[0]],
    )
    assert.equal(f.actor.of(W.directBidRequest).length, 8, 'only the sample was asked')
    assert.equal(f.actor.of(W.bidRequest).length, 0, 'no gossip')
  })

  it('bidSample 0: one publish to every subscriber, as before', async () => {
    const f = net(() => 'bid', { ...CONFIG, bidSample: 0 })
    const patch = await collectBidsStep(f.deps)(jobRecord(), never())
    assert.equal(f.actor.of(W.directBidRequest).length, 0)
    assert.equal(f.actor.of(W.bidRequest).length, 1)
    assert.equal(patch.bids?.length, 40)
  })
})
