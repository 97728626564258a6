/**
 * The provider's capacity news: after resources are freed in the ledger (a run ended, a bid was
 * released or expired), when it starts, when its credential is renewed and when a peer joins
 * CAPACITY_TOPIC (a requester that may not know it yet: its bid-topic join alone wakes nothing
 * there until it has shown a provider credential), what is free now is
 * published on CAPACITY_TOPIC, signed (the envelope) and with this provider's approval credential,
 * coalesced to at most one announcement per `minGapMs` (a burst makes one announcement, at the end
 * of the gap). Nothing is sent while the offer is withdrawn or this provider has no credential.
 * Spec: specs/protocol.md ("Capacity news").
 */
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { ApprovalCredential } from '../contracts/model.js'
import type { CapacityNews } from '../protocol/messages.js'
import type { ResourceLedger } from '../resources/ledger.js'

export interface CapacityAnnouncerDeps {
  clock: Clock
  log: Logger
  ledger: Pick<ResourceLedger, 'onFreed' | 'free' | 'getOffer'>
  approval: { current(): ApprovalCredential | undefined }
  peerId: () => string
  /** Publishes on CAPACITY_TOPIC. */
  publish: (news: CapacityNews) => Promise<void>
  /**
   * More moments to say what is free (each calls `fn` then; returns its unsubscribe): a peer
   * joining CAPACITY_TOPIC, this provider's credential renewed (news waits for a credential).
   */
  announceOn?: Array<(fn: () => void) => () => void>
}

/** At most one announcement per this many ms. */
export const CAPACITY_NEWS_GAP_MS = 1000

export class CapacityAnnouncer {
  /** Announcements published. */
  sent = 0
  private last = -Infinity
  private timer: unknown
  private off: (() => void) | undefined
  private offMore: Array<() => void> = []

  constructor(
    private readonly d: CapacityAnnouncerDeps,
    private readonly minGapMs = CAPACITY_NEWS_GAP_MS,
  ) {}

  start(): void {
    if (this.off !== undefined) return
    this.off = this.d.ledger.onFreed(() => this.freed())
    this.offMore = (this.d.announceOn ?? []).map((on) => on(() => this.freed()))
    this.freed()
  }

  stop(): void {
    this.off?.()
    this.off = undefined
    for (const off of this.offMore) off()
    this.offMore = []
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer)
    this.timer = undefined
  }

  /** Something was freed (or a listener joined): announce now, or once the gap since the last announcement has passed. */
  freed(): void {
    if (this.timer !== undefined) return
    const wait = this.last + this.minGapMs - this.d.clock.now()
    if (wait <= 0) return void this.send()
    this.timer = this.d.clock.setTimeout(() => {
      this.timer = undefined
      void this.send()
    }, wait)
  }

  private async send(): Promise<void> {
    const offer = this.d.ledger.getOffer()
    const approval = this.d.approval.current()
    if (offer === undefined || offer.withdrawnAt !== undefined || approval === undefined) return
    const now = this.d.clock.now()
    this.last = now
    this.sent++
    const news: CapacityNews = { provider: this.d.peerId(), free: this.d.ledger.free(), at: now, approval }
    await this.d.publish(news).catch((err: unknown) => {
      // No requester listens (yet): nothing to tell.
      this.d.log.debug({ err }, 'capacity news not published')
    })
  }
}
