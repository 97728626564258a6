/**
 * Which peers may wake this requester's queued jobs, and how many more. A peer may once it has
 * shown a valid approval credential with role `provider` (on capacity news, a bid or a decline),
 * until that credential expires; a stranger's news never gets here (capacity-news-gate.ts) and its
 * joins wake nothing (provider-joins.ts). It wakes on credit: `start` jobs at first, one spent per
 * job its news or join wakes, one earned back per bid it makes for a job of this requester (up to
 * `max`). A peer that announces room and never bids thus costs at most `start` bid rounds, however
 * often it announces (issue 29: 264 rounds in 12 s against 32 without this), and an honest
 * provider, which bids on what it announced, keeps its credit. A peer's announcement equal to its
 * last one, with no bid from it since, is the same news again: it wakes nothing.
 * Spec: specs/queueing.md ("Capacity news").
 */
import type { Clock } from '../../actors/clock.js'
import type { Resources } from '../resources/types.js'

export interface WakersInit {
  /** Jobs a provider may wake before it has bid. @default 8 */
  start?: number
  /** Most credit a provider can hold (jobs one announcement may wake). @default 64 */
  max?: number
  /** Peers remembered; the least recently seen is forgotten (a stranger again). @default 10000 */
  maxPeers?: number
}

interface Waker {
  /** When its provider credential expires. */
  until: number
  credit: number
  /** Its last announcement's free resources, and whether it bid since. */
  lastFree?: string
  bidSince: boolean
}

export class Wakers {
  private readonly peers = new Map<string, Waker>()
  private readonly start: number
  private readonly max: number
  private readonly maxPeers: number

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    init: WakersInit = {},
  ) {
    this.start = init.start ?? 8
    this.max = init.max ?? 64
    this.maxPeers = init.maxPeers ?? 10_000
  }

  /** `peer` showed a valid credential with role `provider`, good until `until`. */
  approved(peer: string, until: number): void {
    const w = this.peers.get(peer) ?? { until, credit: this.start, bidSince: false }
    w.until = Math.max(w.until, until)
    // Re-inserted, so the map's order is least recently seen first.
    this.peers.delete(peer)
    this.peers.set(peer, w)
    if (this.peers.size > this.maxPeers) this.peers.delete(this.peers.keys().next().value as string)
  }

  /** `peer` (approved until `until`) bid for one of this requester's jobs: one job's credit back. */
  bid(peer: string, until: number): void {
    this.approved(peer, until)
    const w = this.peers.get(peer) as Waker
    w.credit = Math.min(this.max, w.credit + 1)
    w.bidSince = true
  }

  /** Whether `peer` holds an unexpired provider credential here (its join may wake jobs). */
  isApproved(peer: string): boolean {
    const w = this.peers.get(peer)
    return w !== undefined && w.until > this.clock.now()
  }

  /** How many jobs `peer` may wake now: none for a stranger or an expired credential. */
  allowance(peer: string): number {
    return this.isApproved(peer) ? Math.max(0, this.peers.get(peer)?.credit ?? 0) : 0
  }

  /** `peer`'s news or join woke `n` jobs. */
  spend(peer: string, n: number): void {
    const w = this.peers.get(peer)
    if (w !== undefined) w.credit -= n
  }

  /**
   * Whether `free` is what `peer` announced last, with no bid from it since (the same news again:
   * it wakes nothing). Either way it becomes `peer`'s last announcement.
   */
  repeated(peer: string, free: Resources): boolean {
    const w = this.peers.get(peer)
    if (w === undefined) return false
    const key = `${free.cpu}/${free.memoryBytes}/${free.diskBytes}/${free.gpus}`
    const same = w.lastFree === key && !w.bidSince
    w.lastFree = key
    w.bidSince = false
    return same
  }
}
