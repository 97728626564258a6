/**
 * Unapproved bid-request floods stop at the first provider (red-team finding after issue 13), on
 * three real nodes: an unapproved peer connected only to provider A floods the bid-request topic
 * with valid, signed requests that carry no approval credential; provider B, in A's gossip mesh,
 * never gets one of them, and A scores the flooder down. The bid-request topic's admission rule
 * (dms/provider/bid-request-gate.ts) runs as gossipsub's validator, before forwarding.
 */
import assert from 'node:assert/strict'
import { multiaddr } from '@multiformats/multiaddr'
import type { DmsNode } from '../../../dms/node.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { BID_REQUEST_TOPIC } from '../../../dms/protocol/handles.js'
import type { BidRequest } from '../../../dms/protocol/messages.js'
import { startNetwork, type TestNetwork } from '../../helpers/network.js'
import type { TestPeer } from '../../helpers/peers.js'
import { bidRequest, rogueRequester, startRogue } from '../../helpers/rogue.js'

const MiB = 1024 * 1024
const FLOOD = 10

/** Resolves once `check` holds, tested at each of `node`'s receive events and gossip heartbeats. */
function until(node: DmsNode, check: () => boolean): Promise<void> {
  const pubsub = node.host.services.pubsub
  return new Promise((resolve) => {
    const test = () => {
      if (!check()) return
      off()
      pubsub.removeEventListener('gossipsub:heartbeat', test)
      node.provider?.events.off('bid-request-ignored', test)
      resolve()
    }
    const off = node.system.observe(test)
    pubsub.addEventListener('gossipsub:heartbeat', test)
    node.provider?.events.on('bid-request-ignored', test)
    test()
  })
}

const meshOf = (node: DmsNode): string[] =>
  (node.host.services.pubsub as unknown as { getMeshPeers(t: string): string[] })
    .getMeshPeers(BID_REQUEST_TOPIC)
    .map(String)

describe('gossip admission: an unapproved bid-request flood is not relayed', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let rogue: TestPeer
  after(async () => {
    await rogue?.stop()
    await net?.stop()
  })

  it('a flood from an unapproved peer connected to provider A never reaches provider B', async () => {
    net = await startNetwork([
      { cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 },
      { cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 },
    ])
    const [a, b] = net.providers
    await b.host.dial(multiaddr(a.addrs()[0]))
    // B is in A's mesh for the topic: what A accepts, it forwards to B at once.
    await until(a, () => meshOf(a).includes(b.peerId) && meshOf(b).includes(a.peerId))

    // Everything B receives on the topic, as a subscriber next to its provider.
    const seenAtB: string[] = []
    b.system
      .spawn('spy', b.key)
      .subscribe(BID_REQUEST_TOPIC)
      .on(W.bidRequest, (m) => {
        seenAtB.push(m.payload.jobId)
      })

    rogue = await startRogue(a.addrs())
    await rogue.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)
    const r = rogueRequester(rogue)
    for (let i = 0; i < FLOOD; i++) await r.publish(bidRequest(`flood-${i}`, 0.5))
    // A has judged the flood: every message let through (before the fix), or enough refused for
    // gossipsub to graylist the flooder (3: the rest are dropped unread). Counted, not read off the
    // score, which decays back above the graylist threshold within about a second.
    await until(
      a,
      () =>
        (a.provider!.bidRequestsIgnored.no_approval ?? 0) >= FLOOD ||
        (a.system.rejections.not_admitted ?? 0) >= 3,
    )

    // A marker from A itself, approved, sent after the flood on the same stream to B.
    const credential = await net.contractDb.service.approvalFor(a.peerId)
    const marker: BidRequest = bidRequest('marker-from-a', 0.1, credential)
    const from = a.system.spawn('marker', a.key).on(W.bid, () => {})
    await from.publish(BID_REQUEST_TOPIC, W.bidRequest, marker, 60_000)
    await until(b, () => seenAtB.includes('marker-from-a'))

    assert.deepEqual(seenAtB, ['marker-from-a'], 'no flood message reached B')
    assert.equal(b.provider!.bidRequestsIgnored.no_approval, undefined)
    assert.equal(b.system.rejections.not_admitted, undefined)
    assert.equal(b.host.getConnections(rogue.host.peerId).length, 0, 'B never had the flooder as a peer')
    // At A: refused as not admitted (the origin penalised), never delivered to A's provider.
    assert.ok((a.system.rejections.not_admitted ?? 0) >= 1)
    assert.ok((a.transport.gossipScore(rogue.system.peerId) ?? 0) < 0, 'the flooder is scored down at A')
    assert.deepEqual(a.ledger!.entries(), [])
  })
})
