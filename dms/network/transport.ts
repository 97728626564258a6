import { TopicValidatorResult } from '@libp2p/gossipsub'
import type { Connection, PeerId, Stream } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import type { Logger } from 'pino'
import type {
  FrameHandlers,
  FrameVerdict,
  InboundFrame,
  PeerIdStr,
  Transport,
} from '../../actors/transport.js'
import { systemClock, type Clock } from '../../actors/clock.js'
import { retry } from '../../actors/retry.js'
import { readFrames } from './frame-reader.js'
import { GossipView } from './gossip-view.js'
import type { Host } from './host.js'
import { ReadBudget } from './read-budget.js'

/** The direct actor protocol: one long-lived stream per peer carrying length-prefixed envelopes. */
export const ACTOR_PROTOCOL = '/dms/actor/1.0.0'

export interface Libp2pTransportInit {
  /** Frames larger than this are refused by the reader (the stream is closed). @default 4 MiB */
  maxFrameBytes?: number
  /** Inbound actor streams allowed per connection (one is normal). @default 4 */
  maxInboundStreams?: number
  /**
   * Longest a direct frame may take from its first byte to its last; a stream whose frame is not
   * complete by then is aborted (`timeout`). @default 30000 (a 4 MiB frame at 1.1 Mbit/s)
   */
  frameReadTimeoutMs?: number
  /** Bytes of unfinished frames one connection may hold, over its streams (`over_budget`). @default 2 × maxFrameBytes */
  maxUnfinishedBytesPerConnection?: number
  /** Bytes of unfinished frames all connections together may hold (`over_budget`). @default 8 × maxFrameBytes */
  maxUnfinishedBytes?: number
  /**
   * How long the address of a connection dropped for silence (`disconnect`) is dialled last for its
   * peer. @default 60000
   */
  silentAddrMs?: number
}

export interface Libp2pTransportComponents {
  host: Host
  log: Logger
  /** Drives the frame read deadline. @default systemClock */
  clock?: Clock
}

/** Longest this node's own addresses are reused without asking libp2p again (addrs()). */
const ADDRS_TTL_MS = 1000

/** Peers whose silent addresses are remembered at once; the oldest is forgotten first. */
const SILENT_PEERS_KEPT = 64

/** A multiaddr without its trailing `/p2p/<id>`: how a dialled address and a handle's compare. */
const bare = (addr: string): string => addr.replace(/\/p2p\/[^/]+$/, '')

const VERDICT: Record<FrameVerdict, TopicValidatorResult> = {
  accept: TopicValidatorResult.Accept,
  ignore: TopicValidatorResult.Ignore,
  reject: TopicValidatorResult.Reject,
}

/**
 * The actor runtime's Transport over libp2p: direct messages on one long-lived length-prefixed
 * stream per peer, broadcasts on gossipsub. Gossip frames go through the receiver as gossipsub's
 * topic validator, so an invalid envelope is neither delivered nor forwarded, and its origin is
 * scored down. Spec: specs/protocol.md ("Transport").
 */
export class Libp2pTransport implements Transport {
  private handlers: FrameHandlers = { frame: () => 'ignore', refused: () => {} }
  private readonly outbound = new Map<PeerIdStr, Promise<Stream>>()
  private readonly maxFrameBytes: number
  private readonly maxInboundStreams: number
  private readonly frameReadTimeoutMs: number
  private readonly clock: Clock
  /** Unfinished inbound frame bytes, per connection and in total. */
  readonly budget: ReadBudget
  private started = false
  /** addrs() as last asked of libp2p, and when; dropped when they change. */
  private ownAddrs: { at: number; addrs: string[] } | undefined
  private readonly gossip: GossipView
  /** Topics watched for joining subscribers: the live subscribers seen last, and the callbacks. */
  private readonly joins = new Map<string, { live: Set<PeerIdStr>; fns: Set<(peer: PeerIdStr) => void> }>()
  /** Per peer, the addresses of connections dropped for silence, each until when it is dialled last. */
  private readonly silent = new Map<PeerIdStr, Map<string, number>>()
  private readonly silentAddrMs: number

  constructor(
    private readonly components: Libp2pTransportComponents,
    init: Libp2pTransportInit = {},
  ) {
    this.maxFrameBytes = init.maxFrameBytes ?? 4 * 1024 * 1024
    this.maxInboundStreams = init.maxInboundStreams ?? 4
    this.frameReadTimeoutMs = init.frameReadTimeoutMs ?? 30_000
    this.silentAddrMs = init.silentAddrMs ?? 60_000
    this.clock = components.clock ?? systemClock
    this.budget = new ReadBudget({
      perConnection: init.maxUnfinishedBytesPerConnection ?? 2 * this.maxFrameBytes,
      total: init.maxUnfinishedBytes ?? 8 * this.maxFrameBytes,
    })
    this.gossip = new GossipView(components.host)
  }

  get peerId(): PeerIdStr {
    return this.components.host.peerId.toString()
  }

  /**
   * This node's addresses, as every envelope's sender handle carries them (twice for a request:
   * sender and reply-to). Asked of libp2p's address manager at most once a second, and again as
   * soon as libp2p says they changed (`self:peer:update`, which it sends up to a second late):
   * asking it per envelope cost about 3% of a requester's CPU. The array is shared: frozen.
   */
  addrs(): string[] {
    const now = this.clock.now()
    if (this.ownAddrs === undefined || now - this.ownAddrs.at >= ADDRS_TTL_MS || now < this.ownAddrs.at)
      this.ownAddrs = {
        at: now,
        addrs: Object.freeze(this.components.host.getMultiaddrs().map((a) => a.toString())) as string[],
      }
    return this.ownAddrs.addrs
  }

  onFrame(handlers: FrameHandlers): void {
    this.handlers = handlers
  }

  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    const { host } = this.components
    await host.handle(ACTOR_PROTOCOL, (stream, connection) => this.readLoop(stream, connection), {
      maxInboundStreams: this.maxInboundStreams,
      runOnLimitedConnection: false,
    })
    host.addEventListener('peer:disconnect', this.onDisconnect)
    host.addEventListener('self:peer:update', this.onSelfUpdate)
  }

  /** Our addresses changed (a listener, an observed or relayed address): ask libp2p again. */
  private readonly onSelfUpdate = (): void => {
    this.ownAddrs = undefined
  }

  /** A departed peer gossipsub forgot to drop from its topic lists (see GossipView) is dropped here. */
  private readonly onDisconnect = (evt: CustomEvent<PeerId>): void => {
    const peer = evt.detail.toString()
    const topics = this.gossip.forgetDeparted(peer)
    if (topics.length > 0) this.components.log.debug({ peer, topics }, 'dropped a stale gossip subscriber')
  }

  async stop(): Promise<void> {
    if (!this.started) return
    this.started = false
    this.components.host.removeEventListener('peer:disconnect', this.onDisconnect)
    this.components.host.removeEventListener('self:peer:update', this.onSelfUpdate)
    this.ownAddrs = undefined
    this.unwatchJoins()
    this.joins.clear()
    await this.components.host.unhandle(ACTOR_PROTOCOL)
    for (const topic of this.components.host.services.pubsub.topicValidators.keys())
      this.components.host.services.pubsub.topicValidators.delete(topic)
    this.outbound.clear()
    this.silent.clear()
  }

  /**
   * Aborts every connection to `peer`, which stopped answering, and remembers their addresses for
   * `silentAddrMs`: until then a dial to `peer` tries its other addresses first (`open`). A peer
   * served by several processes under one key (the contract-db's instances, specs/contract-db.md
   * "Several instances") is then reached through one that answers.
   */
  disconnect(peer: PeerIdStr): Promise<void> {
    const { host } = this.components
    const conns = host.getConnections(peerIdFromString(peer))
    this.outbound.delete(peer)
    if (conns.length === 0) return Promise.resolve()
    const until = this.clock.now() + this.silentAddrMs
    const addrs = this.silent.get(peer) ?? new Map<string, number>()
    this.silent.delete(peer)
    for (const c of conns) addrs.set(bare(c.remoteAddr.toString()), until)
    this.silent.set(peer, addrs)
    if (this.silent.size > SILENT_PEERS_KEPT) this.silent.delete(this.silent.keys().next().value!)
    this.components.log.debug({ peer, addrs: [...addrs.keys()] }, 'dropped the connections to a silent peer')
    for (const c of conns) c.abort(new Error('peer stopped answering'))
    return Promise.resolve()
  }

  /** `peer`'s addresses dropped for silence and not yet forgiven. */
  private silentAddrs(peer: PeerIdStr): Set<string> {
    const addrs = this.silent.get(peer)
    if (addrs === undefined) return new Set()
    const now = this.clock.now()
    for (const [a, until] of addrs) if (until <= now) addrs.delete(a)
    if (addrs.size === 0) this.silent.delete(peer)
    return new Set(addrs.keys())
  }

  subscribe(topic: string): void {
    const pubsub = this.components.host.services.pubsub
    if (!pubsub.topicValidators.has(topic))
      pubsub.topicValidators.set(topic, (propagationSource, msg) => {
        // StrictSign is gossipsub's default: an unsigned message has no origin to check against.
        if (msg.type !== 'signed') {
          this.refuse({ reason: 'malformed', from: propagationSource.toString(), via: 'gossip' })
          return TopicValidatorResult.Reject
        }
        const verdict = this.deliver({ bytes: msg.data, from: msg.from.toString(), via: 'gossip', topic })
        // Gossipsub lowers the source's score right after this returns; its next RPC (handled only
        // once this one is, awaitRpcHandler) must see that score, not a cached one, so a flooder is
        // graylisted after a few messages (GossipView.rescore). Once more after this turn of the
        // event loop, for an RPC read meanwhile from another of the peer's streams.
        if (verdict === 'reject') {
          const source = propagationSource.toString()
          this.gossip.rescore(source)
          setImmediate(() => this.gossip.rescore(source))
        }
        return VERDICT[verdict]
      })
    pubsub.subscribe(topic)
  }

  /** Leaves `topic`: gossipsub stops delivering it here, and its validator is dropped. */
  unsubscribe(topic: string): void {
    const pubsub = this.components.host.services.pubsub
    pubsub.unsubscribe(topic)
    pubsub.topicValidators.delete(topic)
  }

  /**
   * Calls `fn(peer)` when `peer` becomes a live subscriber of `topic` (`GossipView.liveSubscribers`:
   * a publish now reaches it), checked at each subscription change and gossipsub heartbeat, so a
   * subscriber whose outbound stream opens a moment after its subscription is reported once the
   * stream is there. Peers already live when this is called are not reported.
   */
  onTopicJoin(topic: string, fn: (peer: PeerIdStr) => void): () => void {
    let watch = this.joins.get(topic)
    if (watch === undefined) {
      if (this.joins.size === 0) this.watchJoins()
      watch = { live: new Set(this.topicSubscribers(topic)), fns: new Set() }
      this.joins.set(topic, watch)
    }
    const w = watch
    w.fns.add(fn)
    return () => {
      w.fns.delete(fn)
      if (w.fns.size > 0 || this.joins.get(topic) !== w) return
      this.joins.delete(topic)
      if (this.joins.size === 0) this.unwatchJoins()
    }
  }

  private readonly checkJoins = (): void => {
    for (const [topic, w] of this.joins) {
      const live = new Set(this.topicSubscribers(topic))
      const joined = [...live].filter((p) => !w.live.has(p))
      w.live = live
      for (const peer of joined)
        for (const fn of [...w.fns]) {
          try {
            fn(peer)
          } catch (err) {
            this.components.log.warn({ err, topic }, 'topic join listener threw')
          }
        }
    }
  }

  private watchJoins(): void {
    const pubsub = this.components.host.services.pubsub
    pubsub.addEventListener('subscription-change', this.checkJoins)
    pubsub.addEventListener('gossipsub:heartbeat' as 'subscription-change', this.checkJoins)
  }

  private unwatchJoins(): void {
    const pubsub = this.components.host.services.pubsub
    pubsub.removeEventListener('subscription-change', this.checkJoins)
    pubsub.removeEventListener('gossipsub:heartbeat' as 'subscription-change', this.checkJoins)
  }

  /** The gossip topics this node is subscribed to (mailbox topic management, GET /v1/info). */
  subscribedTopics(): string[] {
    return [...this.components.host.services.pubsub.getTopics()].sort()
  }

  /** The topics this node knows of: subscribed to by a peer it is connected to, with live subscribers. */
  knownTopics(): Array<{ topic: string; peers: number }> {
    return this.gossip.knownTopics()
  }

  topicSubscribers(topic: string): PeerIdStr[] {
    return this.gossip.liveSubscribers(topic).map((p) => p.toString())
  }

  topicPeers(topic: string): number {
    return this.gossip.liveSubscribers(topic).length
  }

  /**
   * Resolves once `n` peers are live subscribers of `topic` (`GossipView.liveSubscribers`: routed
   * by gossipsub, connected, with an open outbound gossip stream; a message published to a peer
   * whose stream is not open yet is lost). Checked again at each subscription change and
   * gossipsub heartbeat.
   */
  waitForTopicPeers(topic: string, n: number, options: { signal?: AbortSignal } = {}): Promise<void> {
    const pubsub = this.components.host.services.pubsub
    return new Promise((resolve, reject) => {
      const done = (err?: unknown) => {
        pubsub.removeEventListener('subscription-change', check)
        pubsub.removeEventListener('gossipsub:heartbeat' as 'subscription-change', check)
        options.signal?.removeEventListener('abort', onAbort)
        if (err === undefined) resolve()
        else reject(err instanceof Error ? err : new Error('aborted', { cause: err }))
      }
      const check = () => {
        if (this.topicPeers(topic) >= n) done()
      }
      const onAbort = () => done(options.signal?.reason ?? new Error('aborted'))
      if (options.signal?.aborted) return onAbort()
      pubsub.addEventListener('subscription-change', check)
      pubsub.addEventListener('gossipsub:heartbeat' as 'subscription-change', check)
      options.signal?.addEventListener('abort', onAbort, { once: true })
      check()
    })
  }

  /** `peer`'s gossipsub score here (below `graylistThreshold`: its RPCs are dropped). Spec: specs/protocol.md. */
  gossipScore(peer: PeerIdStr): number | undefined {
    return this.gossip.scoreOf(peer)
  }

  /** Whether gossipsub here drops `peer`'s RPCs (score below the graylist threshold). */
  graylisted(peer: PeerIdStr): boolean {
    return this.gossip.graylisted(peer)
  }

  async publish(topic: string, bytes: Uint8Array): Promise<void> {
    await this.components.host.services.pubsub.publish(topic, bytes)
  }

  async send(
    peer: PeerIdStr,
    addrs: string[],
    bytes: Uint8Array,
    options: { signal?: AbortSignal } = {},
  ): Promise<void> {
    // Tried twice: a cached stream may have died since its last use (peer restarted, connection
    // dropped); the second try opens a new one. A failure to open is not tried again.
    let opened = false
    await retry(
      async () => {
        opened = false
        const stream = await this.streamTo(peer, addrs, options.signal)
        opened = true
        try {
          if (stream.status !== 'open' || stream.writeStatus !== 'writable')
            throw new Error('stream not writable')
          if (!stream.send(lp.encode.single(bytes))) await stream.onDrain({ signal: options.signal })
        } catch (err) {
          this.outbound.delete(peer)
          stream.abort(err as Error)
          throw err
        }
      },
      { attempts: 2, retryIf: () => opened, clock: this.clock, signal: options.signal },
    )
  }

  private streamTo(peer: PeerIdStr, addrs: string[], signal?: AbortSignal): Promise<Stream> {
    let s = this.outbound.get(peer)
    if (s === undefined) {
      s = this.open(peer, addrs, signal)
      this.outbound.set(peer, s)
      s.catch(() => this.outbound.delete(peer))
    }
    return s
  }

  private async open(peer: PeerIdStr, addrs: string[], signal?: AbortSignal): Promise<Stream> {
    const { host } = this.components
    const id: PeerId = peerIdFromString(peer)
    const connected = host.getConnections(id).length > 0
    if (!connected && addrs.length > 0) {
      await host.peerStore.merge(id, { multiaddrs: addrs.map((a) => multiaddr(a)) })
    }
    const target = connected ? id : await this.dialOrder(id, addrs)
    const stream = await host.dialProtocol(target, ACTOR_PROTOCOL, { signal })
    stream.addEventListener('close', () => {
      if (this.outbound.get(peer) !== undefined)
        void this.outbound.get(peer)?.then((s) => s === stream && this.outbound.delete(peer))
    })
    // The remote never writes on our outbound stream; drain it so a close is noticed.
    void (async () => {
      try {
        for await (const _ of stream) void _
      } catch {
        /* closed */
      }
    })()
    return stream
  }

  /**
   * What to dial for a peer this node is not connected to: its id (libp2p dials the addresses it
   * knows), or, when some of its addresses went silent lately, every address known (the handle's
   * and the peer store's) in that order with the silent ones last: libp2p tries a list one
   * address after another, and a silent one costs a whole address timeout.
   */
  private async dialOrder(id: PeerId, addrs: string[]): Promise<PeerId | Multiaddr[]> {
    const peer = id.toString()
    const silent = this.silentAddrs(peer)
    if (silent.size === 0) return id
    const known = await this.components.host.peerStore.get(id).then(
      (p) => p.addresses.map((a) => a.multiaddr.toString()),
      () => [],
    )
    const all = [...new Set([...addrs, ...known].map(bare))]
    const ordered = [...all.filter((a) => !silent.has(a)), ...all.filter((a) => silent.has(a))]
    return ordered.map((a) => multiaddr(`${a}/p2p/${peer}`))
  }

  private async readLoop(stream: Stream, connection: Connection): Promise<void> {
    const from = connection.remotePeer.toString()
    await readFrames(
      stream,
      { connection: connection.id, stream: stream.id },
      {
        frame: (bytes) => this.deliver({ bytes, from, via: 'direct' }),
        fault: (reason, detail) => {
          // Counted only while running: streams cut by our own stop lose frames on purpose.
          if (this.started) this.refuse({ reason, from, via: 'direct' })
          this.components.log.debug({ reason, detail, from }, 'actor stream frame refused')
        },
      },
      { clock: this.clock, budget: this.budget },
      { maxFrameBytes: this.maxFrameBytes, frameReadTimeoutMs: this.frameReadTimeoutMs },
    )
  }

  private deliver(frame: InboundFrame): FrameVerdict {
    try {
      return this.handlers.frame(frame)
    } catch (err) {
      this.components.log.warn({ err }, 'frame handler threw')
      return 'ignore'
    }
  }

  private refuse(r: Parameters<FrameHandlers['refused']>[0]): void {
    try {
      this.handlers.refused(r)
    } catch (err) {
      this.components.log.warn({ err }, 'refusal handler threw')
    }
  }
}
