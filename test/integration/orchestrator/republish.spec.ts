/**
 * A bid request that is lost (here: a provider that ignores the first one) is published again
 * after a backoff, and the job fails with the providers' decline reasons, never a bare "no providers".
 * The backoff's length is checked on a simulated clock (test/unit/orchestrator/steps/
 * collect-bids.spec.ts) and measured in real time by scripts/bench-failover.ts.
 */
import assert from 'node:assert/strict'
import type { Message } from '../../../actors/system.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { BID_REQUEST_TOPIC, INBOX } from '../../../dms/protocol/handles.js'
import { REQUESTER_CAP_REASON, type BidRequest, type Decline } from '../../../dms/protocol/messages.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'

describe('orchestrator: bid requests re-published with backoff', function () {
  this.timeout(30_000)
  let net: TestNetwork
  let peer: TestPeer

  before(async () => {
    net = await startNetwork([], { requester: { bidWindowMs: 1000 } })
    peer = await startPeer(net.requester.addrs())
  })
  after(async () => {
    await peer?.stop()
    await net?.stop()
  })

  it('a provider that missed the first request answers the second; its reason is the failure', async () => {
    let seen = 0
    // An approved provider: its declines carry its approval credential (unapproved ones are not kept).
    await net.contractDb.service.approve(peer.system.peerId)
    const approval = await net.contractDb.service.approvalFor(peer.system.peerId)
    const actor = peer.system.spawn(INBOX.provider, peer.key)
    actor.subscribe(BID_REQUEST_TOPIC).on(W.bidRequest, async (m: Message) => {
      if (++seen < 2) return // as if the first request was lost
      const req = m.payload as BidRequest
      const decline: Decline = {
        jobId: req.jobId,
        provider: peer.system.peerId,
        reasons: ['answered the second request'],
        approval,
      }
      await actor.send(m.from, W.decline, decline)
    })
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)

    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 1, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1000,
      }),
    )
    const job = await jobReaches(net.requester, posted.record.id)
    assert.equal(job.state, 'failed')
    assert.equal(job.record.error?.code, 'NO_BIDS')
    assert.match(job.record.error.message, /answered the second request/)
    assert.equal(seen, 2, 'published twice: the second got an answer, so no third')
  })
})

describe('orchestrator: a "requester cap" decline is asked again', function () {
  this.timeout(30_000)
  let net: TestNetwork
  let peer: TestPeer

  before(async () => {
    net = await startNetwork([], { requester: { bidWindowMs: 1000 } })
    peer = await startPeer(net.requester.addrs())
  })
  after(async () => {
    await peer?.stop()
    await net?.stop()
  })

  it('a provider holding all it lets this requester hold is asked again, not given up', async () => {
    await net.contractDb.service.approve(peer.system.peerId)
    const approval = await net.contractDb.service.approvalFor(peer.system.peerId)
    const reasons = [
      [
        `${REQUESTER_CAP_REASON} cpu reserved for this requester would be 0.8 of 1 offered, at most 50% per requester`,
      ],
      ['not enough cpu: need 1 core, free 0.5 core'],
    ]
    let seen = 0
    const actor = peer.system.spawn(INBOX.provider, peer.key)
    actor.subscribe(BID_REQUEST_TOPIC).on(W.bidRequest, async (m: Message) => {
      const req = m.payload as BidRequest
      const decline: Decline = {
        jobId: req.jobId,
        provider: peer.system.peerId,
        reasons: reasons[seen++],
        approval,
      }
      await actor.send(m.from, W.decline, decline)
    })
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)

    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 1, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1000,
      }),
    )
    const job = await jobReaches(net.requester, posted.record.id)
    assert.equal(job.record.error?.code, 'NO_BIDS')
    assert.equal(seen, 2, 'the "not now" decline was followed by a second request, the final one by none')
    assert.deepEqual(
      job.record.declines.map((d) => d.reasons),
      [['not enough cpu: need 1 core, free 0.5 core']],
    )
  })
})
