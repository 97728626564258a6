import { randomBytes } from 'node:crypto'
import type { Logger } from 'pino'
import type { Clock } from './clock.js'
import { decodeEnvelope, sealEnvelope, verifyEnvelope, type Envelope, type Handle } from './envelope.js'
import { RemoteError, RequestTimeoutError, UnreachableError } from './errors.js'
import type { KeyPair } from './identity.js'
import { Mailbox, type MailboxInit } from './mailbox.js'
import { ReplayCache } from './replay.js'
import type { InboundFrame, Transport } from './transport.js'

/** A message as a behaviour sees it: verified, decoded, addressed to this actor. */
export interface Message<T = unknown> {
  behaviour: string
  from: Handle
  payload: T
  replyTo?: Handle
  /** The peer the frame came from (equal to from.peer: checked). */
  peer: string
  via: 'direct' | 'gossip'
}

/** Handles one message; for a request, the returned value is the reply (undefined is sent as null). */
export type Behaviour = (msg: Message) => unknown

/** Why an inbound frame was refused. Each is counted. */
export type RejectReason =
  | 'oversized'
  | 'malformed'
  | 'bad_version'
  | 'bad_signature'
  | 'wrong_peer'
  | 'expired'
  | 'future'
  | 'ttl_too_long'
  | 'replayed'
  | 'misaddressed'
  | 'no_inbox'
  | 'no_behaviour'
  | 'unexpected_reply'
  | 'mailbox_full'

export interface ActorSystemInit {
  /** Largest accepted frame. @default 4 MiB */
  maxFrameBytes?: number
  /** Longest envelope lifetime accepted; bounds the replay cache. @default 300000 */
  maxTtlMs?: number
  /** How far in the future issued-at may be. @default 30000 */
  clockSkewMs?: number
  /** Lifetime given to outgoing envelopes. @default 60000 */
  defaultTtlMs?: number
  /** @default 100000 */
  replayCacheSize?: number
  mailbox?: MailboxInit
}

export interface ActorSystemComponents {
  transport: Transport
  clock: Clock
  log: Logger
}

interface PendingReply {
  resolve: (payload: unknown) => void
  reject: (err: Error) => void
  expectKey?: string
}

const enc = new TextEncoder()
const dec = new TextDecoder()
export const encodePayload = (v: unknown): Uint8Array => enc.encode(JSON.stringify(v ?? null))
export const decodePayload = (b: Uint8Array): unknown => (b.length === 0 ? null : JSON.parse(dec.decode(b)))
const REPLY = '#reply'
const ERROR = '#error'

/**
 * Hosts this node's actors: runs the receive pipeline (size -> decode -> signature -> sender peer
 * -> expiry -> replay -> mailbox -> behaviour) and sends signed envelopes for them.
 */
export class ActorSystem {
  readonly rejections: Record<string, number> = {}
  private readonly actors = new Map<string, Actor>()
  private readonly topics = new Map<string, Set<Actor>>()
  private readonly pending = new Map<string, PendingReply>()
  private readonly replay: ReplayCache
  private readonly cfg: Required<Omit<ActorSystemInit, 'mailbox'>> & { mailbox: MailboxInit }

  constructor(
    readonly components: ActorSystemComponents,
    init: ActorSystemInit = {},
  ) {
    this.cfg = {
      maxFrameBytes: init.maxFrameBytes ?? 4 * 1024 * 1024,
      maxTtlMs: init.maxTtlMs ?? 300_000,
      clockSkewMs: init.clockSkewMs ?? 30_000,
      defaultTtlMs: init.defaultTtlMs ?? 60_000,
      replayCacheSize: init.replayCacheSize ?? 100_000,
      mailbox: init.mailbox ?? {},
    }
    this.replay = new ReplayCache(this.cfg.replayCacheSize)
    components.transport.onFrame((f) => this.receive(f))
  }

  get peerId(): string {
    return this.components.transport.peerId
  }

  /** Creates an actor with its own key and inbox on this node. */
  spawn(inbox: string, key: KeyPair, mailbox: MailboxInit = this.cfg.mailbox): Actor {
    if (this.actors.has(inbox)) throw new Error(`inbox ${inbox} already exists`)
    const actor = new Actor(this, inbox, key, mailbox)
    this.actors.set(inbox, actor)
    return actor
  }

  /** Removes an actor; its queued messages are dropped. */
  despawn(actor: Actor): void {
    actor.mailbox.close()
    this.actors.delete(actor.inbox)
    for (const set of this.topics.values()) set.delete(actor)
  }

  stop(): void {
    for (const a of [...this.actors.values()]) this.despawn(a)
    for (const p of this.pending.values()) p.reject(new Error('actor system stopped'))
    this.pending.clear()
  }

  handleOf(actor: Actor, inbox = actor.inbox): Handle {
    return {
      publicKey: actor.key.publicKey as Uint8Array<ArrayBuffer>,
      peer: this.peerId,
      inbox,
      addrs: this.components.transport.addrs(),
    }
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
    opts: { replyTo?: Handle; ttlMs?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    const bytes = sealEnvelope(actor.key, {
      sender: this.handleOf(actor),
      to: { peer: to.peer, inbox: to.inbox },
      behaviour,
      payload: encodePayload(payload),
      replyTo: opts.replyTo,
      issuedAt: this.components.clock.now(),
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
      payload: encodePayload(payload),
      issuedAt: this.components.clock.now(),
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
    opts: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<unknown> {
    const timeoutMs = opts.timeoutMs ?? 10_000
    const replyInbox = `~reply/${randomBytes(12).toString('hex')}`
    const replyTo = this.handleOf(actor, replyInbox)
    const result = new Promise<unknown>((resolve, reject) => {
      const expectKey = to.publicKey.length > 0 ? Buffer.from(to.publicKey).toString('base64') : undefined
      this.pending.set(replyInbox, { resolve, reject, expectKey })
    })
    let timer: NodeJS.Timeout | undefined
    const onAbort = () => this.pending.get(replyInbox)?.reject(opts.signal?.reason as Error)
    try {
      opts.signal?.throwIfAborted()
      opts.signal?.addEventListener('abort', onAbort, { once: true })
      timer = setTimeout(
        () => this.pending.get(replyInbox)?.reject(new RequestTimeoutError(behaviour, timeoutMs)),
        timeoutMs,
      )
      await this.sendEnvelope(actor, to, behaviour, payload, {
        replyTo,
        ttlMs: Math.max(timeoutMs, 1000),
        signal: opts.signal,
      })
      return await result
    } finally {
      clearTimeout(timer)
      opts.signal?.removeEventListener('abort', onAbort)
      this.pending.delete(replyInbox)
      result.catch(() => {}) // settled by whoever won; nobody else awaits it
    }
  }

  private reject(reason: RejectReason, detail?: Record<string, unknown>): void {
    this.rejections[reason] = (this.rejections[reason] ?? 0) + 1
    this.components.log.debug({ reason, ...detail }, 'frame rejected')
  }

  /** The receive pipeline. Never throws: every refusal is counted. */
  receive(frame: InboundFrame): void {
    if (frame.bytes.length > this.cfg.maxFrameBytes) return this.reject('oversized', { from: frame.from })
    let env: Envelope
    try {
      env = decodeEnvelope(frame.bytes)
    } catch {
      return this.reject('malformed', { from: frame.from })
    }
    if (env.version !== 1) return this.reject('bad_version')
    if (env.sender === undefined || !verifyEnvelope(env))
      return this.reject('bad_signature', { from: frame.from })
    if (env.sender.peer !== frame.from)
      return this.reject('wrong_peer', { from: frame.from, claimed: env.sender.peer })
    const now = this.components.clock.now()
    const issuedAt = Number(env.issuedAt)
    const expiresAt = Number(env.expiresAt)
    if (expiresAt <= now) return this.reject('expired')
    if (issuedAt > now + this.cfg.clockSkewMs) return this.reject('future')
    if (expiresAt - issuedAt > this.cfg.maxTtlMs) return this.reject('ttl_too_long')

    let targets: Actor[] = []
    let pending: PendingReply | undefined
    if (frame.via === 'gossip') {
      if (env.topic === '' || env.topic !== frame.topic) return this.reject('misaddressed')
      targets = [...(this.topics.get(env.topic) ?? [])]
    } else {
      if (env.toPeer !== this.peerId || env.topic !== '') return this.reject('misaddressed')
      if (env.toInbox.startsWith('~reply/')) {
        pending = this.pending.get(env.toInbox)
        if (pending === undefined) return this.reject('unexpected_reply')
        if (
          pending.expectKey !== undefined &&
          pending.expectKey !== Buffer.from(env.sender.publicKey).toString('base64')
        )
          return this.reject('unexpected_reply', { reason: 'reply from another key' })
      } else {
        const actor = this.actors.get(env.toInbox)
        if (actor === undefined) return this.reject('no_inbox', { inbox: env.toInbox })
        targets = [actor]
      }
    }
    if (!this.replay.check(env.nonce, expiresAt, now)) return this.reject('replayed', { from: frame.from })

    let payload: unknown
    try {
      payload = decodePayload(env.payload)
    } catch {
      return this.reject('malformed', { from: frame.from, reason: 'payload' })
    }
    if (pending !== undefined) {
      if (env.behaviour.endsWith(ERROR)) {
        const e = (payload ?? {}) as { code?: string; message?: string; data?: unknown }
        pending.reject(new RemoteError(e.code ?? 'REMOTE_ERROR', e.message ?? 'remote error', e.data))
      } else pending.resolve(payload)
      return
    }
    const msg: Message = {
      behaviour: env.behaviour,
      from: env.sender,
      payload,
      replyTo: env.replyTo,
      peer: frame.from,
      via: frame.via,
    }
    for (const actor of targets)
      if (!actor.mailbox.push(msg)) this.reject('mailbox_full', { inbox: actor.inbox })
  }
}

/** One actor: a key, an inbox, behaviours, a bounded mailbox. */
export class Actor {
  readonly mailbox: Mailbox<Message>
  private readonly behaviours = new Map<string, Behaviour>()

  constructor(
    readonly system: ActorSystem,
    readonly inbox: string,
    readonly key: KeyPair,
    mailbox: MailboxInit,
  ) {
    this.mailbox = new Mailbox<Message>(
      (m) => this.dispatch(m),
      (err, m) => system.components.log.warn({ err, behaviour: m.behaviour }, 'behaviour failed'),
      mailbox,
    )
  }

  get handle(): Handle {
    return this.system.handleOf(this)
  }

  /** Registers the behaviour for a name, e.g. `/dms/job/bid`. */
  on(behaviour: string, fn: Behaviour): this {
    this.behaviours.set(behaviour, fn)
    return this
  }

  /** Receives broadcasts on a gossip topic (dispatched by behaviour name like any message). */
  subscribe(topic: string): this {
    this.system.subscribe(this, topic)
    return this
  }

  send(
    to: Handle,
    behaviour: string,
    payload: unknown,
    opts?: { ttlMs?: number; signal?: AbortSignal },
  ): Promise<void> {
    return this.system.sendEnvelope(this, to, behaviour, payload, opts)
  }

  /** Sends and waits for the reply; rejects with RemoteError, RequestTimeoutError or UnreachableError. */
  request<T = unknown>(
    to: Handle,
    behaviour: string,
    payload: unknown,
    opts?: { timeoutMs?: number; signal?: AbortSignal },
  ): Promise<T> {
    return this.system.request(this, to, behaviour, payload, opts) as Promise<T>
  }

  publish(topic: string, behaviour: string, payload: unknown, ttlMs?: number): Promise<void> {
    return this.system.publish(this, topic, behaviour, payload, ttlMs)
  }

  stop(): void {
    this.system.despawn(this)
  }

  private async dispatch(msg: Message): Promise<void> {
    const fn = this.behaviours.get(msg.behaviour)
    if (fn === undefined) {
      this.system['reject']('no_behaviour', { behaviour: msg.behaviour })
      if (msg.replyTo !== undefined)
        await this.replyError(msg, { code: 'NO_SUCH_BEHAVIOUR', message: `no behaviour ${msg.behaviour}` })
      return
    }
    let result: unknown
    try {
      result = await fn(msg)
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown; data?: unknown }
      const code = typeof e.code === 'string' ? e.code : 'INTERNAL'
      if (code === 'INTERNAL')
        this.system.components.log.warn({ err, behaviour: msg.behaviour }, 'behaviour threw')
      if (msg.replyTo !== undefined)
        await this.replyError(msg, { code, message: String(e.message ?? err), data: e.data })
      return
    }
    if (msg.replyTo !== undefined) {
      await this.system
        .sendEnvelope(this, msg.replyTo, msg.behaviour + REPLY, result ?? null)
        .catch((err: unknown) => {
          this.system.components.log.debug({ err, behaviour: msg.behaviour }, 'reply not delivered')
        })
    }
  }

  private async replyError(
    msg: Message,
    e: { code: string; message: string; data?: unknown },
  ): Promise<void> {
    await this.system.sendEnvelope(this, msg.replyTo as Handle, msg.behaviour + ERROR, e).catch(() => {})
  }
}
