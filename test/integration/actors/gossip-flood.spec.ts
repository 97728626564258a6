/**
 * A gossip flooder is penalised (issue 13, item 6), on real nodes: a peer publishing invalid
 * messages on the bid-request topic sees its score fall below the graylist threshold at the
 * provider it floods, after which its RPCs are dropped before any validation; the provider keeps
 * answering its REST API meanwhile. (Latency under a flood: scripts/bench-gossip-flood.ts.)
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { PeerId } from '@libp2p/interface'
import { ApiClient } from '../../../dms/api/client.js'
import { BID_REQUEST_TOPIC } from '../../../dms/protocol/handles.js'
import { GOSSIP_SCORE_DEFAULTS } from '../../../dms/network/gossip-score.js'
import type { DmsNode } from '../../../dms/node.js'
import { startNetwork, type TestNetwork } from '../../helpers/network.js'
import { spyOnRpcs } from '../../helpers/gossip-spy.js'
import { startPeer, waitForTopicPeers, type TestPeer } from '../../helpers/peers.js'

const MiB = 1024 * 1024
const GRAYLIST = GOSSIP_SCORE_DEFAULTS.graylistThreshold

/** Resolves once `node` scores `peer` below the graylist threshold (checked at each rejection and heartbeat). */
function graylisted(node: DmsNode, peer: PeerId): Promise<void> {
  const pubsub = node.host.services.pubsub
  return new Promise((resolve) => {
    const check = () => {
      if ((node.transport.gossipScore(peer.toString()) ?? 0) >= GRAYLIST) return
      off()
      pubsub.removeEventListener('gossipsub:heartbeat', check)
      resolve()
    }
    const off = node.system.observe(check)
    pubsub.addEventListener('gossipsub:heartbeat', check)
    check()
  })
}

/** Resolves once `node` has counted `n` rejections for `reason` in total. */
function rejectedAtLeast(node: DmsNode, reason: 'malformed', n: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if ((node.system.rejections[reason] ?? 0) < n) return
      off()
      resolve()
    }
    const off = node.system.observe(check)
    check()
  })
}

describe('gossip scoring: a flooder of invalid bid requests is graylisted', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let flooder: TestPeer

  before(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 256 * MiB, perCpuHour: 1000 }])
    flooder = await startPeer(net.providers[0].addrs())
    await waitForTopicPeers(flooder, BID_REQUEST_TOPIC, 1)
  })
  after(async () => {
    await flooder?.stop()
    await net?.stop()
  })

  it('its score falls below the graylist threshold, later messages never reach the validator, and /v1/health answers meanwhile', async () => {
    const provider = net.providers[0]
    const spy = spyOnRpcs(provider, flooder.host.peerId)
    const publish = (n: number) =>
      Promise.all(
        Array.from({ length: n }, () =>
          flooder.host.services.pubsub.publish(BID_REQUEST_TOPIC, randomBytes(200)),
        ),
      )

    const FLOOD = 1000
    const flood = publish(FLOOD)
    const api = new ApiClient(provider.socketPath!)
    const health = await api.call<{ ok: boolean }>('GET', '/v1/health')
    assert.deepEqual([health.status, health.body], [200, { ok: true }], 'the node answers during the flood')
    await flood
    await graylisted(provider, flooder.host.peerId)
    await spy.judged(FLOOD)
    // Every message let through was validated (and refused as malformed); the rest never were.
    await rejectedAtLeast(provider, 'malformed', spy.counts.accepted)
    assert.equal(provider.system.rejections.malformed, spy.counts.accepted)

    // Graylisted now: further messages are dropped before any signature check or validation.
    const before = { ...spy.counts }
    const MORE = 200
    await publish(MORE)
    await spy.judged(FLOOD + MORE)
    assert.deepEqual(spy.counts, { accepted: before.accepted, dropped: before.dropped + MORE })
    assert.equal(provider.system.rejections.malformed, before.accepted)
    assert.ok(provider.transport.gossipScore(flooder.host.peerId.toString())! < GRAYLIST)
    const { body } = await api.call<{
      peers: Array<{ peerId: string; gossipScore: number; graylisted: boolean }>
    }>('GET', '/v1/peers')
    const seen = body.peers.find((p) => p.peerId === flooder.host.peerId.toString())
    assert.equal(seen?.graylisted, true, 'GET /v1/peers shows it graylisted')
    assert.ok(seen.gossipScore < GRAYLIST)

    // An honest peer's traffic on the topic is unaffected: the provider still answers the requester.
    assert.ok(net.requester.transport.topicSubscribers(BID_REQUEST_TOPIC).includes(provider.peerId))
    assert.equal(net.requester.transport.gossipScore(provider.peerId), 0)
  })
})
