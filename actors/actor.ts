import type { Logger } from 'pino'
import { ERROR_SUFFIX, REPLY_SUFFIX, type BehaviourDef, type CodecRegistry } from './codec.js'
import type { Handle } from './envelope.js'
import { codeOf } from './errors.js'
import type { KeyPair } from './identity.js'
import { Mailbox, type MailboxInit } from './mailbox.js'

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

/**
 * What an actor needs of the system hosting it (`ActorSystem` is one): its codecs and logger,
 * and the sending, subscribing and bookkeeping done on the actor's behalf.
 */
export interface ActorHost {
  readonly components: { log: Logger }
  readonly codecs: CodecRegistry
  handleOf(actor: Actor, inbox?: string): Handle
  subscribe(actor: Actor, topic: string): void
  sendEnvelope(
    actor: Actor,
    to: Handle,
    behaviour: string,
    payload: unknown,
    opts?: SendOptions & { replyTo?: Handle },
  ): Promise<void>
  request(
    actor: Actor,
    to: Handle,
    behaviour: string,
    payload: unknown,
    opts?: RequestOptions,
  ): Promise<unknown>
  publish(actor: Actor, topic: string, behaviour: string, payload: unknown, ttlMs?: number): Promise<void>
  despawn(actor: Actor): void
  /** Drops the connections to a peer that stopped answering (ActorSystem.disconnect). */
  disconnect?(peer: string): Promise<void>
  countRejection(reason: 'no_behaviour', detail?: Record<string, unknown>): void
}

export interface SendOptions {
  /** Lifetime of the envelope. @default the system's defaultTtlMs */
  ttlMs?: number
  signal?: AbortSignal
}

export interface RequestOptions {
  /** @default 10000 */
  timeoutMs?: number
  signal?: AbortSignal
}

/**
 * One actor: its own key, an inbox on its node, behaviours by name, a bounded mailbox. Behaviours
 * run one message at a time, in arrival order.
 */
export class Actor {
  readonly mailbox: Mailbox<Message>
  private readonly behaviours = new Map<string, Behaviour>()

  constructor(
    readonly system: ActorHost,
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

  /**
   * Registers the behaviour for a hierarchical name, e.g. `/dms/job/bid`. With a BehaviourDef the
   * handler is typed and the def's codecs are registered with the system if they are not yet.
   */
  on<Req, Rep>(behaviour: BehaviourDef<Req, Rep>, fn: (msg: Message<Req>) => Rep | Promise<Rep>): this
  on(behaviour: string, fn: Behaviour): this
  on(behaviour: string | BehaviourDef<unknown, unknown>, fn: Behaviour): this {
    this.behaviours.set(this.nameOf(behaviour), fn)
    return this
  }

  /** Receives broadcasts on a gossip topic (dispatched by behaviour name like any message). */
  subscribe(topic: string): this {
    this.system.subscribe(this, topic)
    return this
  }

  /** One-way message; resolves once handed to the transport. */
  send<Req>(
    to: Handle,
    behaviour: BehaviourDef<Req, unknown>,
    payload: Req,
    opts?: SendOptions,
  ): Promise<void>
  send(to: Handle, behaviour: string, payload: unknown, opts?: SendOptions): Promise<void>
  send(
    to: Handle,
    behaviour: string | BehaviourDef<unknown, unknown>,
    payload: unknown,
    opts?: SendOptions,
  ): Promise<void> {
    return this.system.sendEnvelope(this, to, this.nameOf(behaviour), payload, opts)
  }

  /**
   * Sends and waits for the reply on a one-shot inbox; rejects with RemoteError,
   * RequestTimeoutError, UnreachableError, or the signal's reason.
   */
  request<Req, Rep>(
    to: Handle,
    behaviour: BehaviourDef<Req, Rep>,
    payload: Req,
    opts?: RequestOptions,
  ): Promise<Rep>
  request<T = unknown>(to: Handle, behaviour: string, payload: unknown, opts?: RequestOptions): Promise<T>
  request(
    to: Handle,
    behaviour: string | BehaviourDef<unknown, unknown>,
    payload: unknown,
    opts?: RequestOptions,
  ): Promise<unknown> {
    return this.system.request(this, to, this.nameOf(behaviour), payload, opts)
  }

  /** Broadcasts on a gossip topic. */
  publish<Req>(
    topic: string,
    behaviour: BehaviourDef<Req, unknown>,
    payload: Req,
    ttlMs?: number,
  ): Promise<void>
  publish(topic: string, behaviour: string, payload: unknown, ttlMs?: number): Promise<void>
  publish(
    topic: string,
    behaviour: string | BehaviourDef<unknown, unknown>,
    payload: unknown,
    ttlMs?: number,
  ): Promise<void> {
    return this.system.publish(this, topic, this.nameOf(behaviour), payload, ttlMs)
  }

  private nameOf(behaviour: string | BehaviourDef<unknown, unknown>): string {
    if (typeof behaviour === 'string') return behaviour
    if (!this.system.codecs.has(behaviour.name)) this.system.codecs.add(behaviour)
    return behaviour.name
  }

  /**
   * Drops this node's connections to `peer`, which stopped answering, so the next request dials it
   * again at another of its addresses (ActorSystem.disconnect).
   */
  async disconnect(peer: string): Promise<void> {
    await this.system.disconnect?.(peer)
  }

  /** Removes the actor from its system; queued messages are dropped, later ones count as late. */
  stop(): void {
    this.system.despawn(this)
  }

  private async dispatch(msg: Message): Promise<void> {
    const fn = this.behaviours.get(msg.behaviour)
    if (fn === undefined) {
      this.system.countRejection('no_behaviour', { behaviour: msg.behaviour, inbox: this.inbox })
      if (msg.replyTo !== undefined)
        await this.replyError(msg, { code: 'NO_SUCH_BEHAVIOUR', message: `no behaviour ${msg.behaviour}` })
      return
    }
    let result: unknown
    try {
      result = await fn(msg)
    } catch (err) {
      const e = err as { message?: unknown; data?: unknown }
      const code = codeOf(err)
      if (code === 'INTERNAL')
        this.system.components.log.warn({ err, behaviour: msg.behaviour }, 'behaviour threw')
      if (msg.replyTo !== undefined)
        await this.replyError(msg, { code, message: String(e.message ?? err), data: e.data })
      return
    }
    if (msg.replyTo !== undefined) {
      await this.system
        .sendEnvelope(this, msg.replyTo, msg.behaviour + REPLY_SUFFIX, result ?? null)
        .catch((err: unknown) => {
          this.system.components.log.debug({ err, behaviour: msg.behaviour }, 'reply not delivered')
        })
    }
  }

  private async replyError(
    msg: Message,
    e: { code: string; message: string; data?: unknown },
  ): Promise<void> {
    await this.system
      .sendEnvelope(this, msg.replyTo as Handle, msg.behaviour + ERROR_SUFFIX, e)
      .catch(() => {})
  }
}
