import type { Clock } from '../../actors/clock.js'

export interface PeerRateLimitInit {
  /**
   * Tokens added per second (the sustained rate): twice the throughput target of one requester
   * (50 jobs/s, specs/benchmarks.md), each job being one bid request to every provider. @default 100
   */
  perSecond?: number
  /** Bucket size (the burst allowed after a quiet spell). @default 200 */
  burst?: number
  /** Peers remembered; the least recently seen is forgotten (it starts again with a full bucket). @default 10000 */
  maxPeers?: number
}

/**
 * A token bucket per peer: `take(peer)` is true while the peer stays under its rate. Time comes
 * from the injected clock, so tests drive it. Memory is bounded by `maxPeers`.
 */
export class PeerRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()
  private readonly perSecond: number
  private readonly burst: number
  private readonly maxPeers: number

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    init: PeerRateLimitInit = {},
  ) {
    this.perSecond = init.perSecond ?? 100
    this.burst = init.burst ?? 200
    this.maxPeers = init.maxPeers ?? 10_000
  }

  take(peer: string): boolean {
    const now = this.clock.now()
    const b = this.buckets.get(peer) ?? { tokens: this.burst, at: now }
    b.tokens = Math.min(this.burst, b.tokens + (Math.max(0, now - b.at) / 1000) * this.perSecond)
    b.at = now
    // Re-inserted, so the map's order is least recently seen first.
    this.buckets.delete(peer)
    this.buckets.set(peer, b)
    if (this.buckets.size > this.maxPeers) this.buckets.delete(this.buckets.keys().next().value as string)
    if (b.tokens < 1) return false
    b.tokens -= 1
    return true
  }
}
