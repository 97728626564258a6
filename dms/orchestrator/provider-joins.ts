/**
 * The requester's watch on the bid-request topic: when an approved provider becomes a live
 * subscriber of it again (it came back), queued jobs bid again at once rather than at the end of
 * their backoff, since that provider has heard none of their requests. A peer this requester has
 * not seen with a provider credential (on its news, bids or declines: wakers.ts) wakes nothing,
 * however often it subscribes; a provider new here announces its capacity when it sees this
 * requester on the capacity topic instead (specs/protocol.md, "Capacity news"). Rate-limited:
 * at most one wake per `minGapMs` over all peers (a join inside the gap wakes once at its end, so a
 * peer flapping its subscription cannot make this node publish a request per flap), and each wake
 * takes at most `maxWoken` jobs, oldest first (a provider's per-peer rate limit drops a burst), and
 * no more than the provider's credit (a join spends it like news does).
 * Spec: specs/queueing.md ("Queued jobs").
 */
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { PeerIdStr, Transport } from '../../actors/transport.js'
import { BID_REQUEST_TOPIC } from '../protocol/handles.js'
import type { CapacityBoard } from './capacity-board.js'

/** At most one wake per this many ms. */
export const JOIN_MIN_GAP_MS = 1000
/** Jobs one join wakes at most. */
export const JOIN_MAX_WOKEN = 32

export interface ProviderJoinsDeps {
  transport: Pick<Transport, 'onTopicJoin'>
  clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>
  log: Logger
  board: Pick<CapacityBoard, 'joined' | 'size' | 'wakers'>
}

export class ProviderJoins {
  /** Joins seen (of strangers among them), and jobs they woke (for /v1/info and tests). */
  joins = 0
  strangers = 0
  woken = 0
  private last = -Infinity
  private timer: unknown
  private pending: PeerIdStr | undefined
  private off: (() => void) | undefined

  constructor(
    private readonly d: ProviderJoinsDeps,
    private readonly minGapMs = JOIN_MIN_GAP_MS,
    private readonly maxWoken = JOIN_MAX_WOKEN,
  ) {}

  start(): void {
    this.off ??= this.d.transport.onTopicJoin?.(BID_REQUEST_TOPIC, (peer) => this.joined(peer))
  }

  stop(): void {
    this.off?.()
    this.off = undefined
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer)
    this.timer = undefined
    this.pending = undefined
  }

  /** `peer` joined the bid topic: if it is an approved provider, wake queued jobs now or at the end of the gap. */
  joined(peer: PeerIdStr): void {
    this.joins++
    if (!this.d.board.wakers.isApproved(peer)) {
      this.strangers++
      return
    }
    this.pending = peer
    if (this.timer !== undefined) return
    const wait = this.last + this.minGapMs - this.d.clock.now()
    if (wait <= 0) return this.wake()
    this.timer = this.d.clock.setTimeout(() => {
      this.timer = undefined
      this.wake()
    }, wait)
  }

  private wake(): void {
    const peer = this.pending
    this.pending = undefined
    if (peer === undefined || this.d.board.size === 0) return
    this.last = this.d.clock.now()
    const n = this.d.board.joined(peer, this.maxWoken)
    this.woken += n
    this.d.log.debug({ peer, woken: n }, 'a provider joined the bid topic: queued jobs bid again')
  }
}
