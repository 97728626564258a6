/**
 * Capacity news from strangers stops at the first requester (issue 29, item 3), on real nodes on
 * 127.0.0.1: a peer connected only to requester R publishes capacity news without a credential,
 * with a forged one and with a real one that lacks the role `provider`, then floods forged ones.
 * A third subscriber S, in R's mesh for the topic, never gets any of it, and R graylists the
 * sender: after a few rejections its messages are dropped before any signature check. The
 * topic's admission rule (dms/orchestrator/capacity-news-gate.ts) runs as gossipsub's validator,
 * before forwarding, on a scored topic.
 */
import assert from 'node:assert/strict'
import type { DmsNode } from '../../../dms/node.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { CAPACITY_TOPIC } from '../../../dms/protocol/handles.js'
import type { CapacityNews } from '../../../dms/protocol/messages.js'
import type { ApprovalCredential } from '../../../dms/contracts/model.js'
import { spyOnRpcs } from '../../helpers/gossip-spy.js'
import { startNetwork, type TestNetwork } from '../../helpers/network.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'

const MiB = 1024 * 1024
const FLOOD = 40

/** Resolves once `check` holds, tested at each of `node`'s receive events and gossip heartbeats. */
function until(node: DmsNode, check: () => boolean): Promise<void> {
  const pubsub = node.host.services.pubsub
  return new Promise((resolve) => {
    const test = () => {
      if (!check()) return
      off()
      pubsub.removeEventListener('gossipsub:heartbeat', test)
      resolve()
    }
    const off = node.system.observe(test)
    pubsub.addEventListener('gossipsub:heartbeat', test)
    test()
  })
}

const meshOf = (node: DmsNode): string[] =>
  (node.host.services.pubsub as unknown as { getMeshPeers(t: string): string[] })
    .getMeshPeers(CAPACITY_TOPIC)
    .map(String)

/** A signature of the same length that does not verify. */
const forge = (cred: ApprovalCredential): ApprovalCredential => ({
  ...cred,
  roles: ['requester', 'provider'],
  signature: cred.signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
})

describe('capacity news admission: strangers are not relayed and are graylisted', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let spy: TestPeer | undefined
  let stranger: TestPeer | undefined
  after(async () => {
    await stranger?.stop()
    await spy?.stop()
    await net?.stop()
  })

  it('unapproved, forged and role-less news never reaches a third subscriber; the sender is graylisted', async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }])
    const r = net.requester

    // S: a plain subscriber of the topic, connected to R only, keeping all it gets.
    spy = await startPeer([r.addrs()[0]])
    const seenAtS: string[] = []
    spy.system
      .spawn('spy', spy.key)
      .subscribe(CAPACITY_TOPIC)
      .on(W.capacityNews, (m) => {
        seenAtS.push(`${m.peer} ${m.payload.free.cpu}`)
      })
    const s = spy
    await until(r, () => meshOf(r).includes(s.system.peerId))

    // The stranger, approved as a requester only: its credential is real but lacks `provider`.
    stranger = await startPeer([r.addrs()[0]])
    const x = stranger
    await x.transport.waitForTopicPeers(CAPACITY_TOPIC, 1)
    await net.contractDb.service.approve(x.system.peerId, ['requester'])
    const roleless = await net.contractDb.service.approvalFor(x.system.peerId)
    assert.deepEqual(roleless.roles, ['requester'])
    const rpcs = spyOnRpcs(r, x.host.peerId)
    const from = x.system.spawn('capacity', x.key)
    const news = (cpu: number, approval?: ApprovalCredential): CapacityNews => ({
      provider: x.system.peerId,
      free: { cpu, memoryBytes: 1024 * MiB, diskBytes: 1024 * MiB, gpus: 0 },
      at: Date.now(),
      ...(approval !== undefined ? { approval } : {}),
    })
    const sent = [news(1000), news(1001, forge(roleless)), news(1002, roleless)]
    for (let i = 0; i < FLOOD; i++) sent.push(news(2000 + i, forge(roleless)))
    for (const n of sent) await from.publish(CAPACITY_TOPIC, W.capacityNews, n, 60_000)
    await rpcs.judged(sent.length)

    // A marker from R itself, sent after the flood on the same stream to S.
    const credential = await net.contractDb.service.approvalFor(r.peerId)
    const marker = r.system.spawn('marker', r.key)
    await marker.publish(
      CAPACITY_TOPIC,
      W.capacityNews,
      { ...news(7), provider: r.peerId, approval: credential },
      60_000,
    )
    await until(r, () => seenAtS.includes(`${r.peerId} 7`))

    // S may also hear the real provider's own news (what it has free), relayed by R.
    assert.deepEqual(
      seenAtS.filter((seen) => !seen.startsWith(net.providers[0].peerId)),
      [`${r.peerId} 7`],
      'nothing of the stranger reached S',
    )
    const counts = r.orchestrator!.capacityNews.counts
    assert.equal(counts.no_approval, 1)
    assert.equal(counts.approval_role, 1, 'a real credential without the role provider')
    assert.ok((counts.approval_forged ?? 0) >= 1, 'the forged credential was refused')
    assert.equal(r.orchestrator!.capacity.wakers.isApproved(x.system.peerId), false, 'not a provider here')
    assert.ok((r.system.rejections.not_admitted ?? 0) >= 3, 'refused as not admitted: its sender scored down')
    assert.ok(rpcs.counts.dropped > 0, 'graylisted: later messages dropped before any check')
    assert.ok(
      (r.system.rejections.not_admitted ?? 0) < sent.length / 2,
      `most were never validated (${r.system.rejections.not_admitted} of ${sent.length})`,
    )
  })
})
