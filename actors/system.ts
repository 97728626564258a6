import { randomBytes } from 'node:crypto'
import type { Logger } from 'pino'
import {
  Actor,
  type ActorHost,
  type Behaviour,
  type Message,
  type RequestOptions,
  type SendOptions,
} from './actor.js'
import type { Clock } from './clock.js'
import { CodecRegistry, ERROR_SUFFIX, REPLY_SUFFIX, type ErrorPayload } from './codec.js'
import { decodeEnvelope, sealEnvelope, verifyEnvelope, type Envelope, type Handle } from './envelope.js'
import { RemoteError, RequestTimeoutError, UnreachableError } from './errors.js'
import type { KeyPair } from './identity.js'
import type { MailboxInit } from './mailbox.js'
import { systemConfig, type ActorSystemInit, type SystemConfig } from './system-config.js'
import { ReplayCache } from './replay.js'
import { ClosedInboxes } from './closed-inboxes.js'
import { IGNORED, type LateReason, type RejectReason, type TopicAdmission } from './receive-rules.js'
import type { FrameVerdict, InboundFrame, PeerIdStr, Transport, TransportRefusal } from './transport.js'

export { Actor, type Behaviour, type Message, type RequestOptions, type SendOptions }
export type { LateReason, RejectReason, TopicAdmission } from './receive-rules.js'
export type { ActorSystemInit } from './system-config.js'

export interface ActorSystemComponents {
  transport: Transport
  clock: Clock
  log: Logger
  /** Payload codecs by behaviour. @default an empty registry: every payload is JSON */
  codecs?: CodecRegistry
}

/** Counters for metrics (GET /v1/info, Prometheus names in specs/protocol.md). */
export interface ActorSystemMetrics {
  rejections: Partial<Record<RejectReason, number>>
  late: Partial<Record<LateReason, number>>
  delivered: number
  actors: number
  pendingRequests: number
  replayCacheSize: number
}

/** A counted refusal or late arrival, as observers see it (metrics exporters, tests). */
export type ReceiveEvent = { kind: 'rejected'; reason: RejectReason } | { kind: 'late'; reason: LateReason }

interface PendingReply {
  resolve: (payload: unknown) => void
  reject: (err: Error) => void
  expectKey?: string
  /** The request's behaviour: a reply must be `<it>#reply` or `<it>#error`. */
  behaviour: string
}

const REPLY_INBOX = '~reply/'
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64')

/**
 * Hosts this node's actors. Runs the receive pipeline (size -> decode -> signature -> sender peer
 * -> reply-to peer -> expiry -> address -> replay -> payload -> mailbox -> behaviour) and sends
 * signed envelopes for them. Never throws on input: every refusal is counted.
 */
export class ActorSystem implements ActorHost {
  readonly rejections: Partial<Record<RejectReason, number>> = {}
  readonly late: Partial<Record<LateReason, number>> = {}
  private delivered = 0
  private readonly observers = new Set<(e: ReceiveEvent) => void>()
  private readonly actors = new Map<string, Actor>()
  private readonly topics = new Map<string, Set<Actor>>()
  private readonly pending = new Map<string, PendingReply>()
  /** inbox -> until when a message for it counts as late rather than misaddressed. */
  private readonly closed: ClosedInboxes
  private readonly replay: ReplayCache
  private readonly admissions = new Map<string, TopicAdmission>()
  readonly codecs: CodecRegistry
  private readonly cfg: SystemConfig
  /** Peers already logged as speaking another protocol version (`tellVersion`). */
  private readonly versionTold = new Set<string>()

  constructor(
    readonly components: ActorSystemComponents,
    init: ActorSystemInit = {},
  ) {
    this.cfg = systemConfig(init)
    this.replay = new ReplayCache(this.cfg.replayCacheSize)
    this.closed = new ClosedInboxes(this.cfg.closedInboxMemory, this.cfg.maxTtlMs)
    this.codecs = components.codecs ?? new CodecRegistry()
    components.transport.onFrame({
      frame: (f) => this.receive(f),
      refused: (r: TransportRefusal) => this.countRejection(r.reason, { from: r.from, via: r.via }),
    })
  }

  get peerId(): string {
    return this.components.transport.peerId
  }

  /** The protocol version this system speaks (`ActorSystemInit.version`). */
  get version(): number {
    return this.cfg.version
  }

  metrics(): ActorSystemMetrics {
    return {
      rejections: { ...this.rejections },
      late: { ...this.late },
      delivered: this.delivered,
      actors: this.actors.size,
      pendingRequests: this.pending.size,
      replayCacheSize: this.replay.size,
    }
  }

  /** Calls `fn` on every counted rejection and late arrival; returns the unsubscribe function. */
  observe(fn: (e: ReceiveEvent) => void): () => void {
    this.observers.add(fn)
    return () => this.observers.delete(fn)
  }

  private emit(e: ReceiveEvent): void {
    for (const fn of this.observers) {
      try {
        fn(e)
      } catch (err) {
        this.components.log.warn({ err }, 'receive observer threw')
      }
    }
  }

  /** Creates an actor with its own key and inbox on this node. */
  spawn(inbox: string, key: KeyPair, mailbox: MailboxInit = this.cfg.mailbox): Actor {
    if (this.actors.has(inbox)) throw new Error(`inbox ${inbox} already exists`)
    if (inbox.startsWith(REPLY_INBOX)) throw new Error(`inbox names starting ${REPLY_INBOX} are reserved`)
    const actor = new Actor(this, inbox, key, mailbox)
    this.actors.set(inbox, actor)
    this.closed.forget(inbox)
    return actor
  }

  /** Removes an actor; its queued messages are dropped and later ones are counted as late. */
  despawn(actor: Actor): void {
    if (this.actors.get(actor.inbox) !== actor) return
    actor.mailbox.close()
    this.actors.delete(actor.inbox)
    for (const set of this.topics.values()) set.delete(actor)
    this.remember(actor.inbox)
  }

  stop(): void {
    for (const a of [...this.actors.values()]) this.despawn(a)
    for (const p of this.pending.values()) p.reject(new Error('actor system stopped'))
    this.pending.clear()
  }

  /**
   * Drops the connections to `peer`, which stopped answering (Transport.disconnect); nothing when
   * the transport cannot.
   */
  async disconnect(peer: PeerIdStr): Promise<void> {
    if (peer === this.peerId) return
    await this.components.transport.disconnect?.(peer)
  }

  handleOf(actor: Actor, inbox = actor.inbox): Handle {
    return {
      publicKey: actor.key.publicKey as Uint8Array<ArrayBuffer>,
      peer: this.peerId,
      inbox,
      addrs: this.components.transport.addrs(),
    }
  }

  /**
   * Sets the admission rule of gossip `topic` (replacing any earlier one): the layer above decides
   * what may travel on its topics, this system only asks it (specs/protocol.md, step 14).
   */
  admit(topic: string, rule: TopicAdmission): void {
    this.admissions.set(topic, rule)
  }

  /** @internal */
  subscribe(actor: Actor, topic: string): void {
    let set = this.topics.get(topic)
    if (set === undefined) this.topics.set(topic, (set = new Set()))
    set.add(actor)
    this.components.transport.subscribe(topic)
  }

  /** @internal */
  async sendEnvelope(
    actor: Actor,
    to: Handle,
    behaviour: string,
    payload: unknown,
    opts: SendOptions & { replyTo?: Handle } = {},
  ): Promise<void> {
    const bytes = sealEnvelope(actor.key, {
      sender: this.handleOf(actor),
      to: { peer: to.peer, inbox: to.inbox },
      behaviour,
      payload: this.codecs.encode(behaviour, payload),
      replyTo: opts.replyTo,
      issuedAt: this.components.clock.now(),
      version: this.cfg.version,
      ttlMs: opts.ttlMs ?? this.cfg.defaultTtlMs,
    })
    if (to.peer === this.peerId) {
      queueMicrotask(() => this.receive({ bytes, from: this.peerId, via: 'direct' }))
      return
    }
    try {
      await this.components.transport.send(to.peer, to.addrs, bytes, { signal: opts.signal })
    } catch (err) {
      throw new UnreachableError(to.peer, err)
    }
  }

  /** @internal */
  async publish(
    actor: Actor,
    topic: string,
    behaviour: string,
    payload: unknown,
    ttlMs?: number,
  ): Promise<void> {
    const bytes = sealEnvelope(actor.key, {
      sender: this.handleOf(actor),
      topic,
      behaviour,
      payload: this.codecs.encode(behaviour, payload),
      issuedAt: this.components.clock.now(),
      version: this.cfg.version,
      ttlMs: ttlMs ?? this.cfg.defaultTtlMs,
    })
    await this.components.transport.publish(topic, bytes)
  }

  /** @internal */
  async request(
    actor: Actor,
    to: Handle,
    behaviour: string,
    payload: unknown,
    opts: RequestOptions = {},
  ): Promise<unknown> {
    const timeoutMs = opts.timeoutMs ?? 10_000
    const replyInbox = `${REPLY_INBOX}${randomBytes(12).toString('hex')}`
    const replyTo = this.handleOf(actor, replyInbox)
    const result = new Promise<unknown>((resolve, reject) => {
      const expectKey = to.publicKey.length > 0 ? b64(to.publicKey) : undefined
      this.pending.set(replyInbox, { resolve, reject, expectKey, behaviour })
    })
    let timer: unknown
    const onAbort = () => this.pending.get(replyInbox)?.reject(opts.signal?.reason as Error)
    try {
      opts.signal?.throwIfAborted()
      opts.signal?.addEventListener('abort', onAbort, { once: true })
      timer = this.components.clock.setTimeout(
        () => this.pending.get(replyInbox)?.reject(new RequestTimeoutError(behaviour, timeoutMs)),
        timeoutMs,
      )
      await this.sendEnvelope(actor, to, behaviour, payload, {
        replyTo,
        ttlMs: Math.min(Math.max(timeoutMs, 1000), this.cfg.maxTtlMs),
        signal: opts.signal,
      })
      return await result
    } finally {
      if (timer !== undefined) this.components.clock.clearTimeout(timer)
      opts.signal?.removeEventListener('abort', onAbort)
      if (this.pending.delete(replyInbox)) this.remember(replyInbox)
      result.catch(() => {}) // settled by whoever won; nobody else awaits it
    }
  }

  /** @internal Counts a refusal (also used by actors for `no_behaviour`). */
  countRejection(reason: RejectReason, detail?: Record<string, unknown>): void {
    this.rejections[reason] = (this.rejections[reason] ?? 0) + 1
    this.components.log.debug({ reason, ...detail }, 'frame rejected')
    this.emit({ kind: 'rejected', reason })
  }

  private reject(reason: RejectReason, detail?: Record<string, unknown>): FrameVerdict {
    this.countRejection(reason, detail)
    return IGNORED.has(reason) ? 'ignore' : 'reject'
  }

  /**
   * Logs once per peer (of the last `versionPeerMemory`) that it speaks another protocol version,
   * with both numbers: an old or hostile peer sending many frames costs one line, not one each.
   */
  private tellVersion(from: string, theirs: number): void {
    if (this.versionTold.has(from)) return
    if (this.versionTold.size >= this.cfg.versionPeerMemory)
      this.versionTold.delete(this.versionTold.values().next().value!)
    this.versionTold.add(from)
    const older = theirs < this.cfg.version ? 'the peer' : 'this node'
    this.components.log.warn(
      { peer: from, peerVersion: theirs, version: this.cfg.version },
      `peer ${from} speaks protocol ${theirs}, this node ${this.cfg.version}: its messages are refused; upgrade ${older}`,
    )
  }

  private lateArrival(reason: LateReason, inbox: string): FrameVerdict {
    this.late[reason] = (this.late[reason] ?? 0) + 1
    this.components.log.debug({ reason, inbox }, 'message for a closed inbox dropped')
    this.emit({ kind: 'late', reason })
    return 'ignore'
  }

  private remember(inbox: string): void {
    this.closed.remember(inbox, this.components.clock.now())
  }

  /** The receive pipeline (specs/protocol.md "Receive pipeline"). Never throws. */
  receive(frame: InboundFrame): FrameVerdict {
    try {
      return this.pipeline(frame)
    } catch (err) {
      // A bug in a check must not take the node down with it; count it with the malformed.
      this.components.log.warn({ err, from: frame.from }, 'receive pipeline threw')
      return this.reject('malformed', { from: frame.from, reason: 'pipeline error' })
    }
  }

  private pipeline(frame: InboundFrame): FrameVerdict {
    const from = frame.from
    if (frame.bytes.length > this.cfg.maxFrameBytes) return this.reject('oversized', { from })
    let env: Envelope
    try {
      env = decodeEnvelope(frame.bytes)
    } catch (err) {
      return this.reject('malformed', { from, err: (err as Error).message })
    }
    if (env.version !== this.cfg.version) {
      this.tellVersion(from, env.version)
      return this.reject('bad_version', { from, version: env.version })
    }
    if (env.sender === undefined || !verifyEnvelope(env, frame.bytes))
      return this.reject('bad_signature', { from })
    if (env.sender.peer !== from) return this.reject('wrong_peer', { from, claimed: env.sender.peer })
    // A reply may only be asked for on the requester's own node: otherwise anyone could make this
    // node send signed replies (and connections) to a third party.
    if (env.replyTo !== undefined && env.replyTo.peer !== from)
      return this.reject('bad_reply_to', { from, replyTo: env.replyTo.peer })
    const now = this.components.clock.now()
    const issuedAt = Number(env.issuedAt)
    const expiresAt = Number(env.expiresAt)
    if (expiresAt <= now) return this.reject('expired', { from })
    if (issuedAt > now + this.cfg.clockSkewMs) return this.reject('future', { from })
    if (expiresAt - issuedAt > this.cfg.maxTtlMs) return this.reject('ttl_too_long', { from })

    let targets: Actor[] = []
    let pending: PendingReply | undefined
    let lateReason: LateReason | undefined
    if (frame.via === 'gossip') {
      if (env.topic === '' || env.topic !== frame.topic) return this.reject('misaddressed', { from })
      targets = [...(this.topics.get(env.topic) ?? [])]
    } else {
      if (env.toPeer !== this.peerId || env.topic !== '') return this.reject('misaddressed', { from })
      if (env.toInbox.startsWith(REPLY_INBOX)) {
        pending = this.pending.get(env.toInbox)
        if (pending === undefined) {
          if (!this.closed.recentlyClosed(env.toInbox, now)) return this.reject('unexpected_reply', { from })
          lateReason = 'reply_after_timeout'
        } else if (pending.expectKey !== undefined && pending.expectKey !== b64(env.sender.publicKey))
          return this.reject('unexpected_reply', { from, reason: 'reply from another key' })
        else if (
          env.behaviour !== pending.behaviour + REPLY_SUFFIX &&
          env.behaviour !== pending.behaviour + ERROR_SUFFIX
        )
          return this.reject('unexpected_reply', { from, reason: 'reply for another behaviour' })
      } else {
        const actor = this.actors.get(env.toInbox)
        if (actor !== undefined) targets = [actor]
        else if (this.closed.recentlyClosed(env.toInbox, now)) lateReason = 'inbox_closed'
        else return this.reject('no_inbox', { from, inbox: env.toInbox })
      }
    }
    if (!this.replay.check(env.sender.publicKey, env.nonce, expiresAt, now))
      return this.reject('replayed', { from })
    if (lateReason !== undefined) return this.lateArrival(lateReason, env.toInbox)

    let payload: unknown
    try {
      payload = this.codecs.decode(env.behaviour, env.payload)
    } catch (err) {
      return this.reject('bad_payload', { from, behaviour: env.behaviour, err: (err as Error).message })
    }
    const msg: Message = {
      behaviour: env.behaviour,
      from: env.sender,
      payload,
      replyTo: env.replyTo,
      peer: from,
      via: frame.via,
    }
    if (frame.via === 'gossip') {
      const verdict = this.admissions.get(env.topic)?.(msg) ?? 'accept'
      if (verdict !== 'accept')
        return this.reject(verdict === 'reject' ? 'not_admitted' : 'throttled', { from, topic: env.topic })
    }
    this.delivered++
    if (pending !== undefined) {
      if (env.behaviour.endsWith(ERROR_SUFFIX)) {
        const e = payload as ErrorPayload
        pending.reject(new RemoteError(e.code, e.message, e.data))
      } else pending.resolve(payload)
      return 'accept'
    }
    for (const actor of targets)
      if (!actor.mailbox.push(msg)) this.countRejection('mailbox_full', { inbox: actor.inbox })
    return 'accept'
  }
}
