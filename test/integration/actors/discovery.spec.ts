import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { KeyPair } from '../../../actors/identity.js'
import type { Host } from '../../../dms/network/host.js'
import { hostOptions } from '../../../dms/network/host.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'

function connected(host: Host, peer: string): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (host.getConnections().some((c) => c.remotePeer.toString() === peer)) {
        host.removeEventListener('connection:open', check)
        resolve()
      }
    }
    host.addEventListener('connection:open', check)
    check()
  })
}

describe('network discovery and settings', function () {
  this.timeout(20_000)
  const peers: TestPeer[] = []
  afterEach(async () => {
    for (const p of peers.splice(0).reverse()) await p.stop()
  })

  it('bootstrap: a node dials its list at start and actors can talk', async () => {
    const a = await startPeer()
    peers.push(a)
    const b = await startPeer([a.addr])
    peers.push(b)
    await connected(b.host, a.transport.peerId)
    const svc = a.system.spawn('svc', KeyPair.generate()).on('/t/ping', () => 'pong')
    const c = b.system.spawn('c', KeyPair.generate())
    assert.equal(await c.request(svc.handle, '/t/ping', null, { timeoutMs: 5000 }), 'pong')
  })

  it('mDNS: two nodes with no bootstrap list find and connect to each other', async () => {
    const serviceTag = `dms-test-${randomBytes(4).toString('hex')}.local`
    const mdns = { intervalMs: 200, serviceTag }
    const a = await startPeer([], { host: { mdns } })
    peers.push(a)
    const b = await startPeer([], { host: { mdns } })
    peers.push(b)
    await Promise.race([connected(a.host, b.transport.peerId), connected(b.host, a.transport.peerId)])
  })

  it('one-host settings apply only when asked; explicit values win', () => {
    const plain = hostOptions({})
    assert.deepEqual(plain.connectionManager, {})
    assert.equal(plain.gossipsub.scoreParams?.IPColocationFactorWeight, undefined, "gossipsub's default")
    const one = hostOptions({ oneHost: true })
    assert.equal(one.connectionManager.inboundConnectionThreshold, Infinity)
    assert.equal(one.gossipsub.scoreParams?.IPColocationFactorWeight, 0)
    const tuned = hostOptions({
      oneHost: true,
      connections: { maxConnections: 50, inboundConnectionThreshold: 20 },
      gossipsub: { D: 8, heartbeatIntervalMs: 700, ipColocationFactorWeight: -10 },
    })
    assert.deepEqual(tuned.connectionManager, { maxConnections: 50, inboundConnectionThreshold: 20 })
    assert.equal(tuned.gossipsub.D, 8)
    assert.equal(tuned.gossipsub.heartbeatInterval, 700)
    assert.equal(tuned.gossipsub.scoreParams?.IPColocationFactorWeight, -10)
  })

  it('scores the topics it validates: rejected messages count, thresholds as configured', () => {
    const { gossipsub } = hostOptions({
      oneHost: true,
      scoredTopics: ['/t/1'],
      gossipsub: { score: { invalidMessageWeight: -4, graylistThreshold: -100 } },
    })
    const t = gossipsub.scoreParams?.topics?.['/t/1']
    assert.deepEqual(
      [t?.topicWeight, t?.invalidMessageDeliveriesWeight, t?.invalidMessageDeliveriesDecay],
      [1, -4, 0.9],
    )
    assert.deepEqual(
      [
        t?.timeInMeshWeight,
        t?.firstMessageDeliveriesWeight,
        t?.meshMessageDeliveriesWeight,
        t?.meshFailurePenaltyWeight,
      ],
      [0, 0, 0, 0],
    )
    assert.deepEqual(gossipsub.scoreThresholds, {
      gossipThreshold: -10,
      publishThreshold: -50,
      graylistThreshold: -100,
    })
    assert.equal(gossipsub.scoreParams?.IPColocationFactorWeight, 0, 'one-host settings still apply')
  })
})
