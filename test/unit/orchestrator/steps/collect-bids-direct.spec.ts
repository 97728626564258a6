/**
 * Push orchestration in the `bidding` step, on a simulated clock: with `providers.direct` the bid
 * request is sent to each chosen provider over the direct stream and never published on gossip;
 * with `gossipFallback`, it is published once none of them bid.
 */
import assert from 'node:assert/strict'
import { W } from '../../../../dms/protocol/behaviours.js'
import { handleOf, INBOX } from '../../../../dms/protocol/handles.js'
import type { BidRequest } from '../../../../dms/protocol/messages.js'
import { collectBidsStep } from '../../../../dms/orchestrator/steps/collect-bids.js'
import { newParty } from '../../../helpers/contracts.js'
import { CONFIG, jobRecord, never, signedBid, stepDeps } from '../../../helpers/steps.js'

describe('orchestrator/steps/collect-bids: direct (push)', () => {
  const p1 = newParty()
  const p2 = newParty()

  it('sends the request to each direct provider, never on gossip, and takes their bids', async () => {
    const f = stepDeps({ config: { ...CONFIG, enoughBids: 1 } })
    f.transport.subscribers = [p1.peer, p2.peer]
    const job = jobRecord()
    job.spec.providers.direct = [p1.peer]
    const step = collectBidsStep(f.deps)(job, never())
    // The credentials are awaited first (approval, funds): the request leaves a few turns later.
    await new Promise((resolve) => setImmediate(resolve))
    const [sent] = f.actor.sent
    assert.equal(sent.kind, 'send')
    assert.equal(sent.behaviour, W.directBidRequest.name)
    assert.equal(sent.to?.peer, p1.peer)
    assert.equal(sent.to?.inbox, INBOX.provider)
    f.session.addBid(signedBid(p1, (sent.payload as BidRequest).jobId), handleOf(p1.peer, INBOX.provider))
    const patch = await step
    assert.deepEqual(
      patch.bids?.map((b) => b.provider),
      [p1.peer],
    )
    assert.ok(!f.actor.sent.some((s) => s.kind === 'publish'), 'never on gossip')
  })

  it('no direct bid: gossip only with gossipFallback', async () => {
    for (const gossipFallback of [false, true]) {
      const f = stepDeps({ config: { ...CONFIG, publishAttempts: 1 } })
      f.transport.subscribers = [p1.peer, p2.peer]
      f.actor.onPublish = (req: BidRequest) =>
        f.session.addBid(signedBid(p2, req.jobId), handleOf(p2.peer, INBOX.provider))
      const job = jobRecord()
      job.spec.providers = { ...job.spec.providers, direct: [p1.peer], gossipFallback }
      let ended = false
      const step = collectBidsStep(f.deps)(job, never()).finally(() => (ended = true))
      // Each bid window runs to its deadline (the direct one, then the gossip one if any).
      while (!ended) await f.clock.advanceAsync(CONFIG.bidWindowMs)
      const patch = await step
      assert.equal(f.actor.sent.filter((s) => s.kind === 'publish').length, gossipFallback ? 1 : 0)
      assert.deepEqual(
        patch.bids?.map((b) => b.provider),
        gossipFallback ? [p2.peer] : [],
      )
    }
  })
})
