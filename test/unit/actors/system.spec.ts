/**
 * The receive pipeline and request/reply of ActorSystem, over an in-memory Transport and a fake
 * clock. The real libp2p path is covered in test/integration/actors.
 */
import assert from 'node:assert/strict'
import { pino } from 'pino'
import { ManualClock } from '../../../actors/clock.js'
import { decodeEnvelope, Envelope, sealEnvelope, type EnvelopeInit } from '../../../actors/envelope.js'
import { CodecRegistry, type PayloadCodec } from '../../../actors/codec.js'
import { RemoteError, RequestTimeoutError } from '../../../actors/errors.js'
import { ErrorReply } from '../../../proto/envelope.js'
import { KeyPair } from '../../../actors/identity.js'
import { ActorSystem, type Actor, type ActorSystemInit, type Message } from '../../../actors/system.js'
import type { FrameHandlers, InboundFrame, PeerIdStr, Transport } from '../../../actors/transport.js'
import { silentLogger } from '../../../dms/log.js'

const T0 = 1_700_000_000_000

/** Connects FakeTransports by peer id; frames are delivered on a later microtask, like a network. */
class FakeNetwork {
  readonly nodes = new Map<PeerIdStr, FakeTransport>()
}

class FakeTransport implements Transport {
  private handlers?: FrameHandlers
  readonly topics = new Set<string>()
  readonly sent: Array<{ peer: PeerIdStr; bytes: Uint8Array }> = []

  constructor(
    readonly peerId: PeerIdStr,
    private readonly net: FakeNetwork,
  ) {
    net.nodes.set(peerId, this)
  }

  addrs(): string[] {
    return [`/memory/${this.peerId}`]
  }

  send(peer: PeerIdStr, _addrs: string[], bytes: Uint8Array): Promise<void> {
    const target = this.net.nodes.get(peer)
    if (target === undefined) return Promise.reject(new Error(`no route to ${peer}`))
    this.sent.push({ peer, bytes })
    queueMicrotask(() => target.deliver({ bytes, from: this.peerId, via: 'direct' }))
    return Promise.resolve()
  }

  publish(topic: string, bytes: Uint8Array): Promise<void> {
    for (const node of this.net.nodes.values())
      if (node !== this && node.topics.has(topic))
        queueMicrotask(() => node.deliver({ bytes, from: this.peerId, via: 'gossip', topic }))
    return Promise.resolve()
  }

  subscribe(topic: string): void {
    this.topics.add(topic)
  }

  topicSubscribers(topic: string): PeerIdStr[] {
    return [...this.net.nodes.values()].filter((n) => n !== this && n.topics.has(topic)).map((n) => n.peerId)
  }

  topicPeers(topic: string): number {
    return this.topicSubscribers(topic).length
  }

  waitForTopicPeers(): Promise<void> {
    return Promise.resolve()
  }

  onFrame(handlers: FrameHandlers): void {
    this.handlers = handlers
  }

  deliver(frame: InboundFrame): void {
    this.handlers?.frame(frame)
  }

  refuse(reason: 'oversized' | 'malformed', from: PeerIdStr): void {
    this.handlers?.refused({ reason, from, via: 'direct' })
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

/** Lets queued microtasks and I/O callbacks run (no timers involved). */
const flush = () => new Promise<void>((r) => setImmediate(r))

const PEER_A = '12D3KooWNodeA'
const PEER_B = '12D3KooWNodeB'

describe('actors/system', () => {
  const stops: Array<() => void> = []
  afterEach(() => {
    for (const s of stops.splice(0)) s()
  })

  describe('receive pipeline', () => {
    interface Fixture {
      system: ActorSystem
      clock: ManualClock
      actor: Actor
      calls: Message[]
      remote: KeyPair
      /** A frame sealed by `remote` on PEER_B for the `svc` actor, as it would arrive. */
      frame(over?: Partial<EnvelopeInit>, from?: PeerIdStr): InboundFrame
      /** Sends a fresh valid message and checks it reaches the behaviour. */
      assertStillDelivers(): Promise<void>
    }

    function setup(init: ActorSystemInit = {}): Fixture {
      const net = new FakeNetwork()
      const clock = new ManualClock(T0)
      const system = new ActorSystem(
        { transport: new FakeTransport(PEER_A, net), clock, log: silentLogger },
        init,
      )
      stops.push(() => system.stop())
      const calls: Message[] = []
      const actor = system.spawn('svc', KeyPair.generate()).on('/test/hit', (m) => {
        calls.push(m)
      })
      const remote = KeyPair.generate()
      let seq = 0
      const frame = (over: Partial<EnvelopeInit> = {}, from: PeerIdStr = PEER_B): InboundFrame => ({
        bytes: sealEnvelope(remote, {
          sender: {
            publicKey: remote.publicKey as Uint8Array<ArrayBuffer>,
            peer: PEER_B,
            inbox: 'client',
            addrs: [],
          },
          to: { peer: PEER_A, inbox: 'svc' },
          behaviour: '/test/hit',
          payload: new TextEncoder().encode(JSON.stringify({ seq: ++seq })),
          issuedAt: clock.now(),
          ttlMs: 60_000,
          ...over,
        }),
        from,
        via: 'direct',
      })
      return {
        system,
        clock,
        actor,
        calls,
        remote,
        frame,
        async assertStillDelivers() {
          const before = calls.length
          const f = frame()
          system.receive(f)
          await actor.mailbox.idle()
          assert.equal(calls.length, before + 1, 'a valid message after the rejection was not delivered')
          assert.deepEqual(
            calls.at(-1)?.payload,
            JSON.parse(new TextDecoder().decode(decodeEnvelope(f.bytes).payload)),
          )
        },
      }
    }

    it('dispatches a valid direct message to the behaviour with sender, peer and payload', async () => {
      const fx = setup()
      fx.system.receive(fx.frame({ payload: new TextEncoder().encode('{"hello":"world"}') }))
      await fx.actor.mailbox.idle()
      assert.equal(fx.calls.length, 1)
      const m = fx.calls[0]
      assert.deepEqual(m.payload, { hello: 'world' })
      assert.equal(m.behaviour, '/test/hit')
      assert.equal(m.peer, PEER_B)
      assert.equal(m.via, 'direct')
      assert.equal(m.from.peer, PEER_B)
      assert.equal(m.from.inbox, 'client')
      assert.deepEqual(Buffer.from(m.from.publicKey), Buffer.from(fx.remote.publicKey))
      assert.deepEqual(fx.system.rejections, {})
    })

    it('a frame arriving through the transport runs the same pipeline', async () => {
      const fx = setup()
      const t = fx.system.components.transport as unknown as FakeTransport
      t.deliver(fx.frame())
      t.deliver({ ...fx.frame(), from: '12D3KooWSomeoneElse' })
      await fx.actor.mailbox.idle()
      assert.equal(fx.calls.length, 1)
      assert.deepEqual(fx.system.rejections, { wrong_peer: 1 })
    })

    const rejections: Array<{
      reason: string
      title: string
      init?: ActorSystemInit
      make: (fx: Fixture) => InboundFrame
    }> = [
      {
        reason: 'oversized',
        title: 'a frame larger than maxFrameBytes',
        init: { maxFrameBytes: 2048 },
        make: (fx) => fx.frame({ payload: new TextEncoder().encode(JSON.stringify('x'.repeat(4096))) }),
      },
      {
        reason: 'malformed',
        title: 'bytes that are not an envelope',
        make: () => ({
          bytes: new TextEncoder().encode('not a protobuf at all'),
          from: PEER_B,
          via: 'direct',
        }),
      },
      {
        reason: 'bad_payload',
        title: 'a signed envelope whose payload does not decode (not JSON, for an unregistered behaviour)',
        make: (fx) => fx.frame({ payload: new TextEncoder().encode('{nope') }),
      },
      {
        reason: 'bad_version',
        title: 'an envelope of another version (validly signed)',
        make: (fx) => {
          const env = { ...decodeEnvelope(fx.frame().bytes), version: 2 }
          const domain = new TextEncoder().encode('dms/envelope/v1\0')
          const body = Envelope.encode({ ...env, signature: new Uint8Array(0) })
          env.signature = fx.remote.sign(new Uint8Array([...domain, ...body])) as Uint8Array<ArrayBuffer>
          return { bytes: Envelope.encode(env), from: PEER_B, via: 'direct' }
        },
      },
      {
        reason: 'bad_signature',
        title: 'a tampered envelope (last signature byte flipped)',
        make: (fx) => {
          const f = fx.frame()
          const bytes = Uint8Array.from(f.bytes)
          bytes[bytes.length - 1] ^= 0x01
          return { ...f, bytes }
        },
      },
      {
        reason: 'bad_signature',
        title: 'a tampered envelope (payload rewritten after signing)',
        make: (fx) => {
          const env = decodeEnvelope(fx.frame().bytes)
          const payload = new TextEncoder().encode('{"seq":999}')
          return { bytes: Envelope.encode({ ...env, payload }), from: PEER_B, via: 'direct' }
        },
      },
      {
        reason: 'wrong_peer',
        title: 'a frame whose connection peer is not the sender peer it claims',
        make: (fx) => fx.frame({}, '12D3KooWMallory'),
      },
      {
        reason: 'bad_reply_to',
        title: 'a request whose reply-to names another peer than the sender',
        make: (fx) =>
          fx.frame({
            replyTo: {
              publicKey: fx.remote.publicKey as Uint8Array<ArrayBuffer>,
              peer: '12D3KooWVictim',
              inbox: '~reply/00',
              addrs: [],
            },
          }),
      },
      {
        reason: 'malformed',
        title: 'a validly signed envelope with a field in another wire type (issued_at as bytes)',
        make: (fx) => {
          // Field 8 (issued_at) appended as length-delimited: protons would misread it as a varint.
          const f = fx.frame()
          const bytes = new Uint8Array([...f.bytes, (8 << 3) | 2, 1, 0x41])
          return { ...f, bytes }
        },
      },
      {
        reason: 'malformed',
        title: 'an envelope with an unknown field',
        make: (fx) => {
          const f = fx.frame()
          return { ...f, bytes: new Uint8Array([...f.bytes, (20 << 3) | 0, 1]) }
        },
      },
      {
        reason: 'expired',
        title: 'an envelope past its expiry (clock advanced to expiresAt)',
        make: (fx) => {
          const f = fx.frame({ ttlMs: 60_000 })
          fx.clock.advance(60_000)
          return f
        },
      },
      {
        reason: 'future',
        title: 'an envelope issued more than clockSkewMs ahead',
        make: (fx) => fx.frame({ issuedAt: fx.clock.now() + 30_001 }),
      },
      {
        reason: 'ttl_too_long',
        title: 'an envelope living longer than maxTtlMs',
        make: (fx) => fx.frame({ ttlMs: 300_001 }),
      },
      {
        reason: 'misaddressed',
        title: 'an envelope addressed to another peer',
        make: (fx) => fx.frame({ to: { peer: '12D3KooWNodeZ', inbox: 'svc' } }),
      },
      {
        reason: 'misaddressed',
        title: 'a direct frame carrying a broadcast envelope',
        make: (fx) => fx.frame({ to: undefined, topic: '/dms/t' }),
      },
      {
        reason: 'no_inbox',
        title: 'an envelope for an inbox that does not exist here',
        make: (fx) => fx.frame({ to: { peer: PEER_A, inbox: 'nobody' } }),
      },
      {
        reason: 'unexpected_reply',
        title: 'a reply for a request that is not pending',
        make: (fx) => fx.frame({ to: { peer: PEER_A, inbox: '~reply/0123456789abcdef01234567' } }),
      },
    ]

    for (const c of rejections) {
      it(`rejects ${c.title} as ${c.reason}, without calling the behaviour`, async () => {
        const fx = setup(c.init)
        fx.system.receive(c.make(fx))
        await fx.actor.mailbox.idle()
        assert.equal(fx.calls.length, 0, 'the behaviour was called')
        assert.deepEqual(fx.system.rejections, { [c.reason]: 1 })
        await fx.assertStillDelivers()
        assert.deepEqual(fx.system.rejections, { [c.reason]: 1 })
      })
    }

    it('a system of another version refuses the envelope before decoding its payload, and logs each peer once with both numbers', async () => {
      const net = new FakeNetwork()
      const clock = new ManualClock(T0)
      const lines: Array<Record<string, unknown>> = []
      const log = pino(
        { level: 'warn' },
        { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
      )
      let decoded = 0
      const counting: PayloadCodec<unknown> = {
        encode: (v) => new TextEncoder().encode(JSON.stringify(v)),
        decode: (b) => {
          decoded++
          return JSON.parse(new TextDecoder().decode(b)) as unknown
        },
      }
      const codecs = new CodecRegistry().register('/test/hit', { request: counting, reply: counting })
      const system = new ActorSystem(
        { transport: new FakeTransport(PEER_A, net), clock, log, codecs },
        { version: 4 },
      )
      stops.push(() => system.stop())
      const calls: Message[] = []
      system.spawn('svc', KeyPair.generate()).on('/test/hit', (m) => void calls.push(m))
      const remote = KeyPair.generate()
      const frame = (version: number | undefined, from: PeerIdStr): InboundFrame => ({
        bytes: sealEnvelope(remote, {
          sender: {
            publicKey: remote.publicKey as Uint8Array<ArrayBuffer>,
            peer: from,
            inbox: 'c',
            addrs: [],
          },
          to: { peer: PEER_A, inbox: 'svc' },
          behaviour: '/test/hit',
          payload: new TextEncoder().encode('{}'),
          issuedAt: clock.now(),
          ttlMs: 60_000,
          ...(version === undefined ? {} : { version }),
        }),
        from,
        via: 'direct',
      })
      for (let i = 0; i < 50; i++) system.receive(frame(undefined, PEER_B))
      system.receive(frame(5, '12D3KooWNewer'))
      system.receive(frame(4, PEER_B))
      await new Promise((r) => setImmediate(r))
      assert.deepEqual(system.rejections, { bad_version: 51 })
      assert.equal(decoded, 1, 'a payload of another version was decoded')
      assert.equal(calls.length, 1)
      const told = lines.filter((l) => l.peerVersion !== undefined)
      assert.deepEqual(
        told.map((l) => [l.peer, l.peerVersion, l.version]),
        [
          [PEER_B, 1, 4],
          ['12D3KooWNewer', 5, 4],
        ],
      )
      assert.match(String(told[0].msg), /speaks protocol 1, this node 4.*upgrade the peer/)
      assert.match(String(told[1].msg), /upgrade this node/)
    })

    it('two systems of the same non-default version talk, and say it in every envelope', async () => {
      const net = new FakeNetwork()
      const clock = new ManualClock(T0)
      const x = new ActorSystem(
        { transport: new FakeTransport('X', net), clock, log: silentLogger },
        { version: 4 },
      )
      const y = new ActorSystem(
        { transport: new FakeTransport('Y', net), clock, log: silentLogger },
        { version: 4 },
      )
      stops.push(
        () => x.stop(),
        () => y.stop(),
      )
      const echo = x.spawn('echo', KeyPair.generate()).on('/test/echo', (m) => m.payload)
      const caller = y.spawn('caller', KeyPair.generate())
      assert.deepEqual(await caller.request(echo.handle, '/test/echo', { a: 1 }, { timeoutMs: 1000 }), {
        a: 1,
      })
      const sent = (y.components.transport as unknown as FakeTransport).sent.at(-1)!
      assert.equal(decodeEnvelope(sent.bytes).version, 4)
      assert.deepEqual(x.rejections, {})
    })

    it('rejects the same bytes a second time as replayed', async () => {
      const fx = setup()
      const f = fx.frame()
      fx.system.receive(f)
      fx.system.receive(f)
      await fx.actor.mailbox.idle()
      assert.equal(fx.calls.length, 1)
      assert.deepEqual(fx.system.rejections, { replayed: 1 })
      // Still replayed later within its lifetime.
      fx.clock.advance(59_999)
      fx.system.receive(f)
      assert.deepEqual(fx.system.rejections, { replayed: 2 })
      await fx.assertStillDelivers()
      assert.equal(fx.calls.length, 2)
    })

    it('counts no_behaviour for an unknown behaviour name and does not call other behaviours', async () => {
      const fx = setup()
      fx.system.receive(fx.frame({ behaviour: '/test/unknown' }))
      await fx.actor.mailbox.idle()
      assert.equal(fx.calls.length, 0)
      assert.deepEqual(fx.system.rejections, { no_behaviour: 1 })
      await fx.assertStillDelivers()
    })

    it('accepts the limits themselves: issuedAt exactly clockSkewMs ahead, TTL exactly maxTtlMs, 1 ms before expiry', async () => {
      const fx = setup()
      fx.system.receive(fx.frame({ issuedAt: fx.clock.now() + 30_000 }))
      fx.system.receive(fx.frame({ ttlMs: 300_000 }))
      const late = fx.frame({ ttlMs: 60_000 })
      fx.clock.advance(59_999)
      fx.system.receive(late)
      await fx.actor.mailbox.idle()
      assert.deepEqual(fx.system.rejections, {})
      assert.equal(fx.calls.length, 3)
    })

    it('honours configured clockSkewMs and maxTtlMs', async () => {
      const fx = setup({ clockSkewMs: 10, maxTtlMs: 1000 })
      fx.system.receive(fx.frame({ issuedAt: fx.clock.now() + 11 }))
      fx.system.receive(fx.frame({ ttlMs: 1001 }))
      fx.system.receive(fx.frame({ ttlMs: 1000 }))
      await fx.actor.mailbox.idle()
      assert.deepEqual(fx.system.rejections, { future: 1, ttl_too_long: 1 })
      assert.equal(fx.calls.length, 1)
    })

    it('rejects as mailbox_full when the mailbox is full, and recovers once it drains', async () => {
      const fx = setup()
      const gate = deferred()
      const seen: unknown[] = []
      const slow = fx.system
        .spawn('slow', KeyPair.generate(), { capacity: 1 })
        .on('/test/slow', async (m) => {
          seen.push(m.payload)
          if (seen.length === 1) await gate.promise
        })
      const to = { peer: PEER_A, inbox: 'slow' }
      const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v))
      fx.system.receive(fx.frame({ to, behaviour: '/test/slow', payload: enc(1) })) // being handled (blocked)
      fx.system.receive(fx.frame({ to, behaviour: '/test/slow', payload: enc(2) })) // queued: fills capacity 1
      fx.system.receive(fx.frame({ to, behaviour: '/test/slow', payload: enc(3) })) // refused
      assert.deepEqual(fx.system.rejections, { mailbox_full: 1 })
      assert.deepEqual(seen, [1])
      assert.equal(slow.mailbox.stats.dropped, 1)
      gate.resolve()
      await slow.mailbox.idle()
      assert.deepEqual(seen, [1, 2], 'the refused message must not be handled')
      fx.system.receive(fx.frame({ to, behaviour: '/test/slow', payload: enc(4) }))
      await slow.mailbox.idle()
      assert.deepEqual(seen, [1, 2, 4])
      assert.deepEqual(fx.system.rejections, { mailbox_full: 1 })
      await fx.assertStillDelivers()
    })

    it('delivers nothing to a despawned actor, and counts the message as late rather than rejected', async () => {
      const fx = setup()
      fx.actor.stop()
      assert.equal(fx.system.receive(fx.frame()), 'ignore')
      await flush()
      assert.equal(fx.calls.length, 0)
      assert.deepEqual(fx.system.rejections, {})
      assert.deepEqual(fx.system.late, { inbox_closed: 1 })
      // Once the envelope lifetime cap has passed, the closed inbox is forgotten: plain no_inbox.
      fx.clock.advance(300_001)
      fx.system.receive(fx.frame())
      assert.deepEqual(fx.system.rejections, { no_inbox: 1 })
    })

    it('remembers at most closedInboxMemory closed inboxes (oldest forgotten); metrics() reports the counters', () => {
      const fx = setup({ closedInboxMemory: 2 })
      for (const name of ['x1', 'x2', 'x3']) fx.system.spawn(name, KeyPair.generate()).stop()
      fx.system.receive(fx.frame({ to: { peer: PEER_A, inbox: 'x1' } }))
      fx.system.receive(fx.frame({ to: { peer: PEER_A, inbox: 'x2' } }))
      fx.system.receive(fx.frame({ to: { peer: PEER_A, inbox: 'x3' } }))
      assert.deepEqual(fx.system.rejections, { no_inbox: 1 })
      assert.deepEqual(fx.system.late, { inbox_closed: 2 })
      const m = fx.system.metrics()
      assert.deepEqual(m.rejections, { no_inbox: 1 })
      assert.deepEqual(m.late, { inbox_closed: 2 })
      assert.equal(m.actors, 1, 'svc only')
      assert.equal(m.replayCacheSize, 2, 'the no_inbox frame is refused before the replay check')
      assert.equal(m.delivered, 0)
    })

    it('a re-spawned inbox receives again', async () => {
      const fx = setup()
      fx.actor.stop()
      const seen: Message[] = []
      const again = fx.system.spawn('svc', KeyPair.generate()).on('/test/hit', (m) => {
        seen.push(m)
      })
      fx.system.receive(fx.frame())
      await again.mailbox.idle()
      assert.equal(seen.length, 1)
      assert.deepEqual(fx.system.late, {})
    })

    it('replay protection is per sender: the same nonce from two senders is two messages', async () => {
      const fx = setup()
      const first = decodeEnvelope(fx.frame().bytes)
      // Another sender on the same peer reusing that nonce, signed by its own key.
      const other = KeyPair.generate()
      const env: Envelope = {
        ...first,
        sender: { ...first.sender!, publicKey: other.publicKey as Uint8Array<ArrayBuffer> },
        signature: new Uint8Array(0),
      }
      const domain = new TextEncoder().encode('dms/envelope/v1\0')
      env.signature = other.sign(
        new Uint8Array([...domain, ...Envelope.encode({ ...env, signature: new Uint8Array(0) })]),
      ) as Uint8Array<ArrayBuffer>
      fx.system.receive({ bytes: Envelope.encode(first), from: PEER_B, via: 'direct' })
      fx.system.receive({ bytes: Envelope.encode(env), from: PEER_B, via: 'direct' })
      await fx.actor.mailbox.idle()
      assert.equal(fx.calls.length, 2)
      assert.deepEqual(fx.system.rejections, {})
    })

    it('counts refusals reported by the transport (oversized, malformed framing)', async () => {
      const fx = setup()
      const t = fx.system.components.transport as unknown as FakeTransport
      t.refuse('oversized', PEER_B)
      t.refuse('malformed', PEER_B)
      assert.deepEqual(fx.system.rejections, { oversized: 1, malformed: 1 })
      await fx.assertStillDelivers()
    })

    it('gives gossip validation verdicts: accept valid, ignore stale, reject invalid', () => {
      const fx = setup()
      fx.actor.subscribe('/dms/t')
      const f = fx.frame({ to: undefined, topic: '/dms/t' })
      const gossip = { ...f, via: 'gossip' as const, topic: '/dms/t' }
      assert.equal(fx.system.receive(gossip), 'accept')
      assert.equal(fx.system.receive(gossip), 'ignore', 'a replay is stale, not invalid')
      assert.equal(fx.system.receive({ ...gossip, from: '12D3KooWMallory' }), 'reject')
      assert.equal(fx.system.receive({ ...gossip, bytes: new Uint8Array([1, 2, 3]) }), 'reject')
    })

    it("a topic's admission rule judges each valid gossip message before delivery: reject (not_admitted), ignore (throttled)", async () => {
      const fx = setup()
      fx.actor.subscribe('/dms/t')
      const judged: Array<{ payload: unknown; peer: string; via: string }> = []
      let verdict: 'accept' | 'reject' | 'ignore' = 'reject'
      fx.system.admit('/dms/t', (m) => {
        judged.push({ payload: m.payload, peer: m.peer, via: m.via })
        return verdict
      })
      const gossip = () => ({
        ...fx.frame({ to: undefined, topic: '/dms/t' }),
        via: 'gossip' as const,
        topic: '/dms/t',
      })
      assert.equal(fx.system.receive(gossip()), 'reject', 'not forwarded, the origin penalised')
      verdict = 'ignore'
      assert.equal(fx.system.receive(gossip()), 'ignore', 'not forwarded, no penalty')
      verdict = 'accept'
      assert.equal(fx.system.receive(gossip()), 'accept')
      await fx.actor.mailbox.idle()
      assert.deepEqual(fx.system.rejections, { not_admitted: 1, throttled: 1 })
      assert.deepEqual(
        fx.calls.map((c) => c.payload),
        [{ seq: 3 }],
        'only the admitted message is delivered',
      )
      assert.deepEqual(judged[0], { payload: { seq: 1 }, peer: PEER_B, via: 'gossip' }, 'judged decoded')
      // An invalid envelope never reaches the rule; direct messages are not judged by it.
      fx.system.receive({ ...gossip(), bytes: new Uint8Array([1, 2, 3]) })
      fx.system.receive(fx.frame())
      assert.equal(judged.length, 3)
    })
  })

  describe('request/reply over two systems', () => {
    let clock: ManualClock
    let a: ActorSystem
    let b: ActorSystem
    let server: Actor
    let client: Actor

    beforeEach(() => {
      const net = new FakeNetwork()
      clock = new ManualClock(T0)
      a = new ActorSystem({ transport: new FakeTransport(PEER_A, net), clock, log: silentLogger })
      b = new ActorSystem({ transport: new FakeTransport(PEER_B, net), clock, log: silentLogger })
      stops.push(
        () => a.stop(),
        () => b.stop(),
      )
      server = a.spawn('svc', KeyPair.generate())
      client = b.spawn('client', KeyPair.generate())
    })

    it('returns the behaviour result as the reply, and the server sees the caller identity', async () => {
      let seen: Message | undefined
      server.on('/test/double', (m) => {
        seen = m
        return { twice: (m.payload as { n: number }).n * 2 }
      })
      const reply = await client.request<{ twice: number }>(
        server.handle,
        '/test/double',
        { n: 21 },
        { timeoutMs: 1000 },
      )
      assert.deepEqual(reply, { twice: 42 })
      assert.equal(seen?.peer, PEER_B)
      assert.deepEqual(Buffer.from(seen.from.publicKey), Buffer.from(client.key.publicKey))
      assert.match(seen.replyTo?.inbox ?? '', /^~reply\//)
      assert.deepEqual(a.rejections, {})
      assert.deepEqual(b.rejections, {})
    })

    it('an async behaviour reply is awaited; undefined replies as null', async () => {
      server.on('/test/async', async () => {
        await flush()
        return 'later'
      })
      server.on('/test/void', () => undefined)
      assert.equal(await client.request(server.handle, '/test/async', null, { timeoutMs: 1000 }), 'later')
      assert.equal(await client.request(server.handle, '/test/void', null, { timeoutMs: 1000 }), null)
    })

    it('a behaviour throwing {code} reaches the caller as a RemoteError with that code, message and data', async () => {
      server.on('/test/fail', () => {
        throw Object.assign(new Error('not today'), { code: 'NOPE', data: { retryAfter: 5 } })
      })
      const err = await client.request(server.handle, '/test/fail', {}, { timeoutMs: 1000 }).then(
        () => assert.fail('expected a RemoteError'),
        (e: unknown) => e,
      )
      assert.ok(err instanceof RemoteError)
      assert.equal(err.name, 'RemoteError')
      assert.equal(err.code, 'NOPE')
      assert.equal(err.message, 'not today')
      assert.deepEqual(err.data, { retryAfter: 5 })
      // On the wire: code, message and data only, never the stack.
      const sent = (a.components.transport as unknown as FakeTransport).sent.at(-1)!
      const wire = decodeEnvelope(sent.bytes)
      assert.equal(wire.behaviour, '/test/fail#error')
      const body = ErrorReply.decode(wire.payload)
      assert.equal(body.code, 'NOPE')
      assert.equal(body.message, 'not today')
      assert.deepEqual(JSON.parse(new TextDecoder().decode(body.data)), { retryAfter: 5 })
    })

    it('a behaviour throwing without a code is INTERNAL; an unknown behaviour is NO_SUCH_BEHAVIOUR', async () => {
      server.on('/test/crash', () => {
        throw new Error('boom')
      })
      await assert.rejects(client.request(server.handle, '/test/crash', {}, { timeoutMs: 1000 }), {
        name: 'RemoteError',
        code: 'INTERNAL',
        message: 'boom',
      })
      await assert.rejects(client.request(server.handle, '/test/missing', {}, { timeoutMs: 1000 }), {
        name: 'RemoteError',
        code: 'NO_SUCH_BEHAVIOUR',
      })
      assert.deepEqual(a.rejections, { no_behaviour: 1 })
    })

    it('rejects with RequestTimeoutError when no reply comes; a late reply is then counted as late, not rejected', async () => {
      const gate = deferred()
      let called = 0
      server.on('/test/slow', async () => {
        called++
        await gate.promise
        return 'too late'
      })
      const slow = client.request(server.handle, '/test/slow', {}, { timeoutMs: 50 })
      let settled = false
      const settle = () => void (settled = true)
      slow.then(settle, settle)
      await flush()
      clock.advance(49)
      await flush()
      assert.equal(called, 1)
      assert.equal(settled, false, 'pending until its timeout, on the system clock')
      clock.advance(1)
      await assert.rejects(slow, (err: unknown) => {
        assert.ok(err instanceof RequestTimeoutError)
        assert.equal(err.name, 'RequestTimeoutError')
        assert.equal(err.code, 'REQUEST_TIMEOUT')
        assert.match(err.message, /\/test\/slow.*50 ms/)
        return true
      })
      assert.equal(called, 1)
      gate.resolve()
      await server.mailbox.idle()
      await flush()
      assert.deepEqual(b.rejections, {})
      assert.deepEqual(b.late, { reply_after_timeout: 1 })
    })

    it('a reply signed by another key than the handle named is rejected as unexpected_reply', async () => {
      let called = 0
      server.on('/test/echo', (m) => {
        called++
        return m.payload
      })
      const impostorHandle = {
        ...server.handle,
        publicKey: KeyPair.generate().publicKey as Uint8Array<ArrayBuffer>,
      }
      const impostor = client.request(impostorHandle, '/test/echo', 'hi', { timeoutMs: 50 })
      await flush()
      clock.advance(50)
      await assert.rejects(impostor, { name: 'RequestTimeoutError' })
      assert.equal(called, 1, 'the server did reply')
      assert.deepEqual(b.rejections, { unexpected_reply: 1 })
      // Control: the true handle gets the reply.
      assert.equal(await client.request(server.handle, '/test/echo', 'hi', { timeoutMs: 1000 }), 'hi')
    })

    it('a reply under another behaviour name than the request is unexpected_reply', async () => {
      server.on('/test/hang', () => new Promise(() => {}))
      const p = client.request(server.handle, '/test/hang', {}, { timeoutMs: 200 })
      await flush()
      const req = decodeEnvelope((b.components.transport as unknown as FakeTransport).sent.at(-1)!.bytes)
      const forged = sealEnvelope(server.key, {
        sender: server.handle,
        to: { peer: PEER_B, inbox: req.replyTo!.inbox },
        behaviour: '/test/other#reply',
        payload: new TextEncoder().encode('1'),
        issuedAt: clock.now(),
        ttlMs: 1000,
      })
      b.receive({ bytes: forged, from: PEER_A, via: 'direct' })
      assert.deepEqual(b.rejections, { unexpected_reply: 1 })
      clock.advance(200)
      await assert.rejects(p, { name: 'RequestTimeoutError' })
    })

    it('payloads use the registered codec both ways; bytes it cannot decode are bad_payload', async () => {
      const net = new FakeNetwork()
      // A toy codec: a single byte holding a number < 128.
      const byte: PayloadCodec<number> = {
        encode: (n) => new Uint8Array([n]),
        decode: (bytes) => {
          if (bytes.length !== 1 || bytes[0] > 127) throw new Error('not a small number')
          return bytes[0]
        },
      }
      const codecs = new CodecRegistry().register('/test/inc', { request: byte, reply: byte })
      const x = new ActorSystem({ transport: new FakeTransport('X', net), clock, log: silentLogger, codecs })
      const y = new ActorSystem({ transport: new FakeTransport('Y', net), clock, log: silentLogger, codecs })
      stops.push(
        () => x.stop(),
        () => y.stop(),
      )
      const inc = x.spawn('inc', KeyPair.generate()).on('/test/inc', (m) => (m.payload as number) + 1)
      const caller = y.spawn('caller', KeyPair.generate())
      assert.equal(await caller.request(inc.handle, '/test/inc', 41, { timeoutMs: 1000 }), 42)
      const sent = (y.components.transport as unknown as FakeTransport).sent.at(-1)!
      assert.deepEqual([...decodeEnvelope(sent.bytes).payload], [41], 'the request went out in the codec')
      const bad = sealEnvelope(caller.key, {
        sender: caller.handle,
        to: { peer: 'X', inbox: 'inc' },
        behaviour: '/test/inc',
        payload: new Uint8Array([200]),
        issuedAt: clock.now(),
        ttlMs: 1000,
      })
      x.receive({ bytes: bad, from: 'Y', via: 'direct' })
      assert.deepEqual(x.rejections, { bad_payload: 1 })
      assert.equal(await caller.request(inc.handle, '/test/inc', 1, { timeoutMs: 1000 }), 2)
    })

    it('rejects with UnreachableError when the transport cannot send', async () => {
      const nowhere = { ...server.handle, peer: '12D3KooWNowhere' }
      await assert.rejects(client.request(nowhere, '/test/x', {}, { timeoutMs: 1000 }), {
        name: 'UnreachableError',
        code: 'UNREACHABLE',
      })
    })

    it('a request rejects at once when its signal aborts', async () => {
      server.on('/test/hang', () => new Promise(() => {}))
      const ac = new AbortController()
      const p = client.request(server.handle, '/test/hang', {}, { timeoutMs: 10_000, signal: ac.signal })
      ac.abort(new Error('user gave up'))
      await assert.rejects(p, /user gave up/)
    })

    it('a request to an actor on the same system works without the transport', async () => {
      const local = b.spawn('local', KeyPair.generate()).on('/test/ping', () => 'pong')
      const sentBefore = (b.components.transport as unknown as FakeTransport).sent.length
      assert.equal(await client.request(local.handle, '/test/ping', {}, { timeoutMs: 1000 }), 'pong')
      assert.equal((b.components.transport as unknown as FakeTransport).sent.length, sentBefore)
    })

    it('stop() rejects pending requests', async () => {
      server.on('/test/hang', () => new Promise(() => {}))
      const p = client.request(server.handle, '/test/hang', {}, { timeoutMs: 10_000 })
      await flush()
      b.stop()
      await assert.rejects(p, /stopped/)
    })

    it('a broadcast reaches subscribed actors on other systems via gossip', async () => {
      const got: Message[] = []
      server.subscribe('/dms/t').on('/test/news', (m) => {
        got.push(m)
      })
      await client.publish('/dms/t', '/test/news', { headline: 1 })
      await flush()
      await server.mailbox.idle()
      assert.equal(got.length, 1)
      assert.deepEqual(got[0].payload, { headline: 1 })
      assert.equal(got[0].via, 'gossip')
      assert.equal(got[0].peer, PEER_B)
    })

    it('a gossip frame whose topic differs from the envelope topic is misaddressed', async () => {
      const got: Message[] = []
      server.subscribe('/dms/t').on('/test/news', (m) => {
        got.push(m)
      })
      const bytes = sealEnvelope(client.key, {
        sender: client.handle,
        topic: '/dms/other',
        behaviour: '/test/news',
        payload: new TextEncoder().encode('1'),
        issuedAt: clock.now(),
        ttlMs: 1000,
      })
      a.receive({ bytes, from: PEER_B, via: 'gossip', topic: '/dms/t' })
      await server.mailbox.idle()
      assert.equal(got.length, 0)
      assert.deepEqual(a.rejections, { misaddressed: 1 })
    })
  })
})
