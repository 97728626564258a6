/**
 * Hostile peers against real nodes on 127.0.0.1. Each case sends bad traffic from "mallory" and
 * asserts (1) that it was refused and counted under its reason, and (2) that valid traffic still
 * flows afterwards: from an honest peer, and from mallory's own node through its normal transport.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { Stream } from '@libp2p/interface'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import type { Actor } from '../../../actors/actor.js'
import { decodeEnvelope, Envelope, sealEnvelope, type EnvelopeInit } from '../../../actors/envelope.js'
import { KeyPair } from '../../../actors/identity.js'
import type { Message } from '../../../actors/system.js'
import { ACTOR_PROTOCOL } from '../../../dms/network/transport.js'
import { rejected, startPeer, waitForTopicPeers, type TestPeer } from '../../helpers/peers.js'

const TOPIC = '/dms/test/hostile'
const MAX_FRAME = 64 * 1024

describe('actors over libp2p: hostile peers', function () {
  this.timeout(20_000)
  let victim: TestPeer
  let honest: TestPeer
  let mallory: TestPeer
  let svc: Actor
  let got: Message[]
  let waiters: Array<() => void>
  let client: Actor
  let malloryActor: Actor

  /** Resolves when svc has handled `n` messages in total. */
  const handled = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (got.length >= n) resolve()
        else waiters.push(check)
      }
      check()
    })

  beforeEach(async () => {
    got = []
    waiters = []
    victim = await startPeer([], {
      transport: { maxFrameBytes: MAX_FRAME },
      system: { maxFrameBytes: MAX_FRAME },
    })
    honest = await startPeer([victim.addr])
    mallory = await startPeer([victim.addr])
    svc = victim.system
      .spawn('svc', KeyPair.generate())
      .subscribe(TOPIC)
      .on('/test/hit', (m) => {
        got.push(m)
        for (const w of waiters.splice(0)) w()
        return 'ok'
      })
    client = honest.system.spawn('client', KeyPair.generate())
    malloryActor = mallory.system.spawn('m', KeyPair.generate()).subscribe(TOPIC)
  })
  afterEach(async () => {
    for (const p of [mallory, honest, victim]) await p?.stop()
  })

  /** A correctly sealed envelope from mallory's actor to svc, with overrides. */
  const sealed = (over: Partial<EnvelopeInit> = {}, key = malloryActor.key): Uint8Array =>
    sealEnvelope(key, {
      sender: mallory.system.handleOf(malloryActor),
      to: { peer: victim.transport.peerId, inbox: 'svc' },
      behaviour: '/test/hit',
      payload: new TextEncoder().encode(JSON.stringify({ from: 'mallory' })),
      issuedAt: Date.now(),
      ttlMs: 60_000,
      version: victim.system.version,
      ...over,
    })

  /** Mallory's own raw stream to the victim's actor protocol, bypassing its transport. */
  const rawStream = async (): Promise<Stream> =>
    mallory.host.dialProtocol(multiaddr(victim.addr), ACTOR_PROTOCOL, { signal: AbortSignal.timeout(5000) })
  const sendRaw = async (frames: Uint8Array[], framed = true): Promise<Stream> => {
    const s = await rawStream()
    for (const f of frames) s.send(framed ? lp.encode.single(f) : f)
    return s
  }

  /** Valid traffic still flows: an honest request/reply, and mallory's own transport delivers. */
  async function stillFlows(): Promise<void> {
    const before = got.length
    assert.equal(await client.request(svc.handle, '/test/hit', { from: 'honest' }, { timeoutMs: 5000 }), 'ok')
    await malloryActor.send(svc.handle, '/test/hit', { from: 'mallory, behaving' })
    await handled(before + 2)
    assert.deepEqual(
      got.slice(before).map((m) => m.payload),
      [{ from: 'honest' }, { from: 'mallory, behaving' }],
    )
  }

  it('forged signature: refused as bad_signature', async () => {
    const bytes = Uint8Array.from(sealed())
    bytes[bytes.length - 1] ^= 0x01
    await sendRaw([bytes])
    await rejected(victim.system, 'bad_signature')
    assert.equal(got.length, 0)
    await stillFlows()
  })

  it("wrong sender peer: an envelope claiming the honest peer's id is refused as wrong_peer", async () => {
    const env = decodeEnvelope(sealed())
    const lie = sealed({ sender: { ...env.sender!, peer: honest.transport.peerId } })
    await sendRaw([lie])
    await rejected(victim.system, 'wrong_peer')
    assert.equal(got.length, 0)
    await stillFlows()
  })

  it('replayed nonce: the same envelope twice is delivered once, then refused as replayed', async () => {
    const once = sealed()
    await sendRaw([once, once])
    await rejected(victim.system, 'replayed')
    await handled(1)
    assert.equal(got.length, 1)
    // Replayed later on a fresh stream: still refused.
    await sendRaw([once])
    await rejected(victim.system, 'replayed', 2)
    assert.equal(got.length, 1)
    await stillFlows()
  })

  it('expired envelope: refused as expired', async () => {
    await sendRaw([sealed({ issuedAt: Date.now() - 120_000, ttlMs: 60_000 })])
    await rejected(victim.system, 'expired')
    assert.equal(got.length, 0)
    await stillFlows()
  })

  it('reply-to on a third peer: refused as bad_reply_to, no reply is sent to the victim of the reflection', async () => {
    const env = decodeEnvelope(sealed())
    await sendRaw([sealed({ replyTo: { ...env.sender!, peer: honest.transport.peerId, inbox: '~reply/x' } })])
    await rejected(victim.system, 'bad_reply_to')
    assert.equal(got.length, 0)
    await stillFlows()
    assert.deepEqual(honest.system.rejections, {}, 'the honest peer received a reflected reply')
  })

  it('oversized frame: refused as oversized, the stream is closed, the node goes on', async () => {
    const s = await sendRaw([randomBytes(MAX_FRAME + 1)])
    await rejected(victim.system, 'oversized')
    assert.equal(got.length, 0)
    await new Promise<void>((resolve) => {
      if (s.status !== 'open') return resolve()
      s.addEventListener('close', () => resolve(), { once: true })
    })
    await stillFlows()
  })

  it('garbage bytes on the stream: a framed non-envelope and a broken length prefix are malformed', async () => {
    await sendRaw([randomBytes(300)])
    await rejected(victim.system, 'malformed')
    await sendRaw([new Uint8Array(12).fill(0xff)], false)
    await rejected(victim.system, 'malformed', 2)
    assert.equal(got.length, 0)
    await stillFlows()
  })

  it('garbage and forged envelopes on the gossip topic are refused and not forwarded', async () => {
    // A second honest subscriber reachable only through the victim: gossip from mallory must pass
    // the victim's validation to reach it.
    const far = await startPeer([victim.addr])
    try {
      const farGot: Message[] = []
      const farDone = new Promise<void>((resolve) =>
        far.system
          .spawn('listener', KeyPair.generate())
          .subscribe(TOPIC)
          .on('/test/hit', (m) => {
            farGot.push(m)
            resolve()
          }),
      )
      await waitForTopicPeers(mallory, TOPIC, 1)
      await waitForTopicPeers(far, TOPIC, 1)
      await mallory.host.services.pubsub.publish(TOPIC, randomBytes(200))
      await rejected(victim.system, 'malformed')
      const forged = Envelope.decode(
        sealEnvelope(malloryActor.key, {
          sender: mallory.system.handleOf(malloryActor),
          topic: TOPIC,
          behaviour: '/test/hit',
          payload: new TextEncoder().encode('"forged"'),
          issuedAt: Date.now(),
          ttlMs: 60_000,
          version: victim.system.version,
        }),
      )
      forged.payload = new TextEncoder().encode('"tampered"')
      await mallory.host.services.pubsub.publish(TOPIC, Envelope.encode(forged))
      await rejected(victim.system, 'bad_signature')
      assert.equal(got.length, 0)
      // A valid broadcast after the garbage reaches both subscribers.
      await malloryActor.publish(TOPIC, '/test/hit', { from: 'mallory, broadcasting' })
      await handled(1)
      await farDone
      assert.deepEqual(got[0].payload, { from: 'mallory, broadcasting' })
      assert.deepEqual(
        farGot.map((m) => m.payload),
        [{ from: 'mallory, broadcasting' }],
      )
      assert.deepEqual(far.system.rejections, {}, 'the victim forwarded invalid gossip')
      await stillFlows()
    } finally {
      await far.stop()
    }
  })

  it('a flood beyond mailbox capacity is refused as mailbox_full, other actors keep serving, and the mailbox recovers', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const slowGot: unknown[] = []
    let sawAfter!: () => void
    const after = new Promise<void>((r) => (sawAfter = r))
    const slow = victim.system
      .spawn('slow', KeyPair.generate(), { capacity: 4 })
      .on('/test/slow', async (m) => {
        slowGot.push(m.payload)
        if (m.payload === 'after') sawAfter()
        await gate
      })
    const flood = 40
    for (let i = 0; i < flood; i++) void malloryActor.send(slow.handle, '/test/slow', i)
    // One in the behaviour, four queued, the rest refused.
    await rejected(victim.system, 'mailbox_full', flood - 5)
    assert.deepEqual(slowGot, [0])
    assert.equal(slow.mailbox.stats.dropped, flood - 5)
    // While the flooded actor is stuck, another actor on the same node still answers.
    await stillFlows()
    release()
    await slow.mailbox.idle()
    assert.deepEqual(slowGot, [0, 1, 2, 3, 4])
    await malloryActor.send(slow.handle, '/test/slow', 'after')
    await after
    assert.equal(victim.system.rejections.mailbox_full, flood - 5)
  })

  it('a direct stream dropped by the network is re-established on the next send', async () => {
    await malloryActor.send(svc.handle, '/test/hit', 1)
    await handled(1)
    await mallory.host.hangUp(victim.host.peerId)
    await malloryActor.send(svc.handle, '/test/hit', 2)
    await handled(2)
    assert.deepEqual(
      got.map((m) => m.payload),
      [1, 2],
    )
    assert.deepEqual(victim.system.rejections, {})
  })
})
