/**
 * A bid window is not held open by subscribers that will never answer (issue 13, item 4), on real
 * nodes: a departed peer left behind as a gossip subscriber (a "phantom") is not counted, and a
 * connected subscriber that never answers is waited for only briefly, then learned and left out.
 * The windows here are 60 s long: a job that waited for either would outlive the test's timeout.
 */
import assert from 'node:assert/strict'
import { RPC } from '@libp2p/gossipsub/message'
import type { PeerId } from '@libp2p/interface'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import { KeyPair } from '../../../actors/identity.js'
import { BID_REQUEST_TOPIC } from '../../../dms/protocol/handles.js'
import { ACTOR_PROTOCOL } from '../../../dms/network/transport.js'
import type { WindowSummary } from '../../../dms/orchestrator/bid-audience.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'

const MiB = 1024 * 1024
/** A spec the provider declines (its price for it is far above 1): every job ends NO_BIDS. */
const declined = () =>
  parseJobSpec({
    image: TEST_IMAGE,
    command: ['true'],
    resources: { cpu: 1, memory: '64MiB' },
    maxDuration: 60,
    maxPrice: 1,
  })

/** Resolves with the next `peer:disconnect` of `peer` on `net`'s requester. */
const disconnected = (net: TestNetwork, peer: PeerId) =>
  new Promise<void>((resolve) => {
    const h = net.requester.host
    const on = (e: CustomEvent<PeerId>) => {
      if (!e.detail.equals(peer)) return
      h.removeEventListener('peer:disconnect', on)
      resolve()
    }
    h.addEventListener('peer:disconnect', on)
  })

/** Resolves once the requester has identified `peer` (its actor protocol is in the peer store). */
const identified = async (net: TestNetwork, peer: PeerId) => {
  const h = net.requester.host
  const has = async () =>
    (await h.peerStore.get(peer).catch(() => undefined))?.protocols.includes(ACTOR_PROTOCOL)
  await new Promise<void>((resolve) => {
    const on = (e: CustomEvent<{ peer: { id: PeerId; protocols: string[] } }>) => {
      if (e.detail.peer.id.equals(peer) && e.detail.peer.protocols.includes(ACTOR_PROTOCOL)) done()
    }
    const done = () => {
      h.removeEventListener('peer:update', on)
      resolve()
    }
    h.addEventListener('peer:update', on)
    void has().then((yes) => yes === true && done())
  })
}

/** Resolves on the requester's next subscription change from `peer` subscribing to `topic`. */
const subscribed = (net: TestNetwork, peer: PeerId, topic: string) =>
  new Promise<void>((resolve) => {
    const pubsub = net.requester.host.services.pubsub
    const on = (
      e: CustomEvent<{ peerId: PeerId; subscriptions: Array<{ topic: string; subscribe: boolean }> }>,
    ) => {
      if (!e.detail.peerId.equals(peer)) return
      if (!e.detail.subscriptions.some((s) => s.topic === topic && s.subscribe)) return
      pubsub.removeEventListener('subscription-change', on)
      resolve()
    }
    pubsub.addEventListener('subscription-change', on)
  })

describe('orchestrator: the bid window waits only for providers that can answer', function () {
  this.timeout(30_000)
  let net: TestNetwork
  let windows: WindowSummary[]
  const extra: TestPeer[] = []

  beforeEach(async () => {
    net = await startNetwork([{ cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      requester: { bidWindowMs: 60_000 },
    })
    windows = []
    net.requester.orchestrator!.audience.observe((s) => windows.push(s))
  })
  afterEach(async () => {
    for (const p of extra.splice(0)) await p.stop()
    await net?.stop()
  })

  it('a peer that subscribed, sent a junk gossip frame and left is not counted as a subscriber', async () => {
    const mallory = await startPeer(net.requester.addrs())
    extra.push(mallory)
    const malloryId = mallory.host.peerId
    // Identify done (it would re-add mallory to gossipsub's peers), and mallory's gossip stream up.
    await identified(net, malloryId)
    // A raw gossipsub stream: a subscription, then a broken length prefix. Gossipsub drops mallory
    // for the junk, then still reads the subscription mallory's own gossipsub sends next on its
    // older stream, and keeps that subscription after mallory has gone.
    const raw = await mallory.host.dialProtocol(multiaddr(net.requester.addrs()[0]), '/meshsub/1.2.0')
    const dropped = new Promise<void>((resolve) => raw.addEventListener('remoteCloseWrite', () => resolve()))
    raw.send(
      lp.encode.single(
        RPC.encode({ subscriptions: [{ subscribe: true, topic: BID_REQUEST_TOPIC }], messages: [] }),
      ),
    )
    raw.send(new Uint8Array(12).fill(0xff))
    await dropped
    const resubscribed = subscribed(net, malloryId, BID_REQUEST_TOPIC)
    mallory.transport.subscribe(BID_REQUEST_TOPIC)
    await resubscribed
    const gone = disconnected(net, malloryId)
    await mallory.stop()
    await gone

    const provider = net.providers[0].peerId
    assert.deepEqual(net.requester.transport.topicSubscribers(BID_REQUEST_TOPIC), [provider])
    assert.equal(net.requester.transport.topicPeers(BID_REQUEST_TOPIC), 1)
    assert.deepEqual(
      net.requester.host.services.pubsub.getSubscribers(BID_REQUEST_TOPIC).map(String),
      [provider],
      'the stale entry is dropped from gossipsub too',
    )

    const posted = await net.requester.orchestrator!.post(declined())
    const job = await jobReaches(net.requester, posted.record.id)
    assert.equal(job.record.error?.code, 'NO_BIDS')
    assert.deepEqual(
      windows.map((w) => [w.reason, w.asked]),
      [['all_answered', 1]],
    )
  })

  it('a connected subscriber that never answers holds windows only briefly, then is left out', async () => {
    const silent = await startPeer(net.requester.addrs())
    extra.push(silent)
    // Subscribed like a provider, but nothing answers the requests.
    silent.system.spawn('provider', KeyPair.generate()).subscribe(BID_REQUEST_TOPIC)
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 2)
    const orch = net.requester.orchestrator!

    // First job: the provider declines at once; the silent peer is waited for only until the
    // straggler bound, in each of the three publish attempts (it might have missed a request).
    const first = await orch.post(declined())
    assert.equal((await jobReaches(net.requester, first.record.id)).record.error?.code, 'NO_BIDS')
    assert.deepEqual(
      windows.map((w) => [w.reason, w.audience]),
      [
        ['stragglers', 2],
        ['stragglers', 2],
        ['stragglers', 2],
      ],
    )
    assert.deepEqual(windows[2].silent, [silent.system.peerId])
    assert.deepEqual(orch.audience.silentPeers(), [silent.system.peerId])

    // Second job: still asked, no longer waited for; the window closes on the provider's answer.
    windows.length = 0
    const second = await orch.post(declined())
    assert.equal((await jobReaches(net.requester, second.record.id)).record.error?.code, 'NO_BIDS')
    assert.deepEqual(
      windows.map((w) => [w.reason, w.asked, w.audience]),
      [['all_answered', 2, 1]],
    )
  })
})
