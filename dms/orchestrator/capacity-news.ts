/**
 * The requester's listener of capacity news (gossip on CAPACITY_TOPIC, inbox `capacity`): news is
 * judged by the topic's admission rule (capacity-news-gate.ts) before it is delivered or
 * forwarded; what passes wakes queued jobs on the CapacityBoard. News that did not come by gossip
 * on the topic is ignored (`direct`): it skipped the gate. The node may opt out of the topic
 * (`listen(false)`, `POST /v1/topics/unsubscribe`): the choice is stored and kept across
 * restarts. Spec: specs/protocol.md ("Capacity news"), specs/queueing.md ("Topics").
 */
import { STORES } from '../store/tables.js'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { KeyPair } from '../../actors/identity.js'
import type { Actor, ActorSystem, Message } from '../../actors/system.js'
import { W } from '../protocol/behaviours.js'
import { CAPACITY_TOPIC, INBOX } from '../protocol/handles.js'
import type { CapacityNews } from '../protocol/messages.js'
import { Repo, type Db } from '../store/db.js'
import type { CapacityBoard } from './capacity-board.js'
import { CapacityNewsGate } from './capacity-news-gate.js'

export { NEWS_MIN_GAP_MS } from './capacity-news-gate.js'

export interface CapacityNewsDeps {
  system: Pick<ActorSystem, 'spawn' | 'admit'>
  key: KeyPair
  clock: Pick<Clock, 'now'>
  log: Logger
  board: CapacityBoard
  contractDb: string
  /** Keeps the opt-out (sublevel `topics`). */
  db: Db
  /** Leaves the gossip topic (the actor's stop alone keeps the subscription). */
  unsubscribe?: (topic: string) => void
}

/** Key of the stored choice in sublevel `topics`. */
const CHOICE_KEY = CAPACITY_TOPIC

export class CapacityNewsListener {
  /** News kept (`kept`), rejected by the gate and ignored, by reason. */
  readonly counts: Record<string, number> = {}
  /** The topic's admission rule. */
  readonly gate: CapacityNewsGate
  private actor: Actor | undefined
  private readonly choices: Repo<{ subscribed: boolean }>
  private running = false

  constructor(private readonly d: CapacityNewsDeps) {
    this.choices = new Repo(d.db, STORES.topics.name)
    this.gate = new CapacityNewsGate({ ...d, counts: this.counts }, d.contractDb)
  }

  /** Listens, unless the node opted out earlier (a stored choice). */
  async start(): Promise<void> {
    this.running = true
    const choice = await this.choices.get(CHOICE_KEY)
    if (choice?.subscribed !== false && this.running) this.spawn()
  }

  /** Whether this node listens to capacity news now. */
  get listening(): boolean {
    return this.actor !== undefined
  }

  /** Opts in (`true`) or out of capacity news: stored, then applied at once. */
  async listen(on: boolean): Promise<void> {
    await this.choices.put(CHOICE_KEY, { subscribed: on })
    if (!this.running) return
    if (on) this.spawn()
    else {
      this.actor?.stop()
      this.actor = undefined
      this.d.unsubscribe?.(CAPACITY_TOPIC)
    }
  }

  private spawn(): void {
    if (this.actor !== undefined) return
    // Judged as gossipsub validates them, before they are delivered or forwarded to other peers.
    this.d.system.admit(CAPACITY_TOPIC, this.gate.admission)
    this.actor = this.d.system
      .spawn(INBOX.capacity, this.d.key)
      .subscribe(CAPACITY_TOPIC)
      .on(W.capacityNews, (m) => {
        this.receive(m)
      })
  }

  stop(): void {
    this.running = false
    this.actor?.stop()
    this.actor = undefined
  }

  private count(reason: string): void {
    this.counts[reason] = (this.counts[reason] ?? 0) + 1
  }

  /** Takes one piece of news the gate let through; returns why it was ignored, or undefined. */
  receive(m: Message<CapacityNews>): string | undefined {
    const news = m.payload
    if (m.via !== 'gossip' || news.approval === undefined) {
      this.count('direct')
      this.d.log.debug({ from: m.peer }, 'capacity news not sent on the topic ignored')
      return 'direct'
    }
    this.count('kept')
    const woken = this.d.board.announce(m.peer, news.free, news.approval.expiresAt)
    if (woken > 0) this.d.log.debug({ from: m.peer, woken }, 'capacity news woke queued jobs')
    return undefined
  }
}
