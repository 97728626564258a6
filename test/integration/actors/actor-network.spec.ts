import assert from 'node:assert/strict'
import { KeyPair } from '../../../actors/identity.js'
import type { Message } from '../../../actors/system.js'
import type { JobRequest } from '../../../dms/protocol/messages.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { startPeer, waitForTopicPeers, type TestPeer } from '../../helpers/peers.js'

describe('actors over libp2p on loopback', () => {
  let a: TestPeer
  let b: TestPeer
  beforeEach(async () => {
    a = await startPeer()
    b = await startPeer([a.host.getMultiaddrs()[0].toString()])
  })
  afterEach(async () => {
    await b?.stop()
    await a?.stop()
  })

  it('request/reply between two nodes carries payload and sender identity', async () => {
    const server = a.system.spawn('echo', a.key)
    let seen: Message | undefined
    server.on('/test/echo', (m) => {
      seen = m
      return { echoed: (m.payload as { x: number }).x * 2 }
    })
    const client = b.system.spawn('client', KeyPair.generate())
    const reply = await client.request<{ echoed: number }>(server.handle, '/test/echo', { x: 21 })
    assert.deepEqual(reply, { echoed: 42 })
    assert.equal(seen?.peer, b.transport.peerId)
    assert.deepEqual(Buffer.from(seen.from.publicKey), Buffer.from(client.key.publicKey))
  })

  it('typed behaviours: a W def types the handler and the reply, and the payload travels as protobuf', async () => {
    // Neither system was given the DMS registry: using the def registers its codecs.
    const server = a.system.spawn('provider', a.key)
    let seen: Message<JobRequest> | undefined
    server.on(W.jobRequest, (m) => {
      seen = m
      return { locked: true, lockedUntil: 1234 + m.payload.bidId.length }
    })
    const client = b.system.spawn('job', KeyPair.generate())
    const reply = await client.request(server.handle, W.jobRequest, { jobId: 'j', bidId: 'bid-1' })
    assert.deepEqual(reply, { locked: true, lockedUntil: 1239 })
    assert.deepEqual(seen?.payload, { jobId: 'j', bidId: 'bid-1' })
    assert.ok(a.system.codecs.has(W.jobRequest.name) && b.system.codecs.has(W.jobRequest.name))
    // The same payload as JSON would be refused by the registered protobuf codec.
    const json = new TextEncoder().encode(JSON.stringify({ jobId: 'j', bidId: 'x' }))
    assert.throws(() => a.system.codecs.decode(W.jobRequest.name, json))
  })

  it('a behaviour error reaches the caller as a RemoteError with its code', async () => {
    const server = a.system.spawn('svc', a.key)
    server.on('/test/fail', () => {
      throw Object.assign(new Error('nope'), { code: 'NOPE' })
    })
    const client = b.system.spawn('client', KeyPair.generate())
    await assert.rejects(client.request(server.handle, '/test/fail', {}), {
      name: 'RemoteError',
      code: 'NOPE',
    })
  })

  it('broadcast on a gossip topic reaches subscribed actors on other nodes', async () => {
    const topic = '/dms/test/topic'
    const got = new Promise<Message>((resolve) => {
      a.system.spawn('listener', a.key).subscribe(topic).on('/test/hello', resolve)
    })
    const sender = b.system.spawn('sender', b.key).subscribe(topic)
    await waitForTopicPeers(b, topic, 1)
    await sender.publish(topic, '/test/hello', { hi: 1 })
    const m = await got
    assert.deepEqual(m.payload, { hi: 1 })
    assert.equal(m.via, 'gossip')
    assert.equal(m.peer, b.transport.peerId)
  })
})
