import type { Handle } from './envelope.js'
import type { KeyPair } from './identity.js'
import { Mailbox, type MailboxInit } from './mailbox.js'
import type { ActorSystem, Behaviour, Message } from './system.js'

export const REPLY = '#reply'
export const ERROR = '#error'

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

  /** Registers the behaviour for a hierarchical name, e.g. `/dms/job/bid`. */
  on(behaviour: string, fn: Behaviour): this {
    this.behaviours.set(behaviour, fn)
    return this
  }

  /** Receives broadcasts on a gossip topic (dispatched by behaviour name like any message). */
  subscribe(topic: string): this {
    this.system.subscribe(this, topic)
    return this
  }

  /** One-way message; resolves once handed to the transport. */
  send(to: Handle, behaviour: string, payload: unknown, opts?: SendOptions): Promise<void> {
    return this.system.sendEnvelope(this, to, behaviour, payload, opts)
  }

  /**
   * Sends and waits for the reply on a one-shot inbox; rejects with RemoteError,
   * RequestTimeoutError, UnreachableError, or the signal's reason.
   */
  request<T = unknown>(to: Handle, behaviour: string, payload: unknown, opts?: RequestOptions): Promise<T> {
    return this.system.request(this, to, behaviour, payload, opts) as Promise<T>
  }

  /** Broadcasts on a gossip topic. */
  publish(topic: string, behaviour: string, payload: unknown, ttlMs?: number): Promise<void> {
    return this.system.publish(this, topic, behaviour, payload, ttlMs)
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
