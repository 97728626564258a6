/**
 * The requester's listener of capacity news (gossip on CAPACITY_TOPIC, inbox `capacity`): news is
 * kept only from the peer that signed it, carrying that peer's approval credential from this
 * requester's contract-db, and at most one per peer per NEWS_MIN_GAP_MS (providers send at most
 * one a second); what passes wakes queued jobs on the CapacityBoard. The node may opt out of the
 * topic (`listen(false)`, `POST /v1/topics/unsubscribe`): the choice is stored and kept across
 * restarts. Spec: specs/protocol.md ("Capacity news"), specs/queueing.md ("Topics").
 */
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { KeyPair } from '../../actors/identity.js'
import type { Actor, ActorSystem, Message } from '../../actors/system.js'
import { ApprovalCache } from '../contracts/approval-cache.js'
import { W } from '../protocol/behaviours.js'
import { CAPACITY_TOPIC, INBOX } from '../protocol/handles.js'
import type { CapacityNews } from '../protocol/messages.js'
import { Repo, type Db } from '../store/db.js'
import type { CapacityBoard } from './capacity-board.js'

/** News closer together than this from one peer is ignored (`rate_limited`). */
export const NEWS_MIN_GAP_MS = 500
/** Peers whose last news time is remembered (the oldest is forgotten past this). */
const PEERS_KEPT = 10_000

export interface CapacityNewsDeps {
  system: Pick<ActorSystem, 'spawn'>
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
  /** News kept (`kept`) and ignored, by reason. */
  readonly counts: Record<string, number> = {}
  private readonly lastFrom = new Map<string, number>()
  /** A provider's credential is the same on all its news for minutes: its signature is verified once. */
  private readonly approvals = new ApprovalCache()
  private actor: Actor | undefined
  private readonly choices: Repo<{ subscribed: boolean }>
  private running = false

  constructor(private readonly d: CapacityNewsDeps) {
    this.choices = new Repo(d.db, 'topics')
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

  /** Checks one piece of news; returns why it was ignored, or undefined when it was kept. */
  receive(m: Message<CapacityNews>): string | undefined {
    const news = m.payload
    const now = this.d.clock.now()
    const why =
      news.provider !== m.peer
        ? 'other_signer'
        : (this.approvals.check(news.approval, { peer: m.peer, contractDb: this.d.contractDb, now }) ??
          (now - (this.lastFrom.get(m.peer) ?? -Infinity) < NEWS_MIN_GAP_MS ? 'rate_limited' : undefined))
    if (why !== undefined) {
      this.count(why)
      this.d.log.debug({ from: m.peer, why }, 'capacity news ignored')
      return why
    }
    this.lastFrom.delete(m.peer)
    this.lastFrom.set(m.peer, now)
    if (this.lastFrom.size > PEERS_KEPT) this.lastFrom.delete(this.lastFrom.keys().next().value as string)
    this.count('kept')
    const woken = this.d.board.announce(m.peer, news.free)
    if (woken > 0) this.d.log.debug({ from: m.peer, woken }, 'capacity news woke queued jobs')
    return undefined
  }
}
