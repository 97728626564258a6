/**
 * Remembers (sender key, nonce) pairs until their envelope expires, so a replayed envelope is
 * refused. Keyed on the sender too: a nonce is only unique per signer, and another sender reusing
 * a nonce (by chance or on purpose) must not get a victim's messages refused.
 *
 * Bounded: when full, expired entries are pruned; if it is still full, the tenth expiring soonest
 * is evicted (an envelope's lifetime is capped by the receiver's maxTtlMs, so an evicted entry's
 * envelope is the closest to expiring anyway). Spec: specs/protocol.md ("Receive pipeline").
 */
export class ReplayCache {
  private readonly seen = new Map<string, number>()
  /** Entries evicted while still live (a replay of those would be accepted): should stay 0. */
  evictedLive = 0

  constructor(private readonly max = 100_000) {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('replay cache size must be >= 1')
  }

  /** Records the pair; false when it was already seen and has not expired. */
  check(sender: Uint8Array, nonce: Uint8Array, expiresAt: number, now: number): boolean {
    const id = `${Buffer.from(sender).toString('base64')}:${Buffer.from(nonce).toString('base64')}`
    const prev = this.seen.get(id)
    if (prev !== undefined && prev > now) return false
    if (prev === undefined && this.seen.size >= this.max) this.prune(now)
    this.seen.set(id, expiresAt)
    return true
  }

  get size(): number {
    return this.seen.size
  }

  private prune(now: number): void {
    for (const [id, exp] of this.seen) if (exp <= now) this.seen.delete(id)
    if (this.seen.size >= this.max) {
      const byExpiry = [...this.seen].sort((a, b) => a[1] - b[1])
      const evict = byExpiry.slice(0, Math.ceil(this.max / 10))
      this.evictedLive += evict.length
      for (const [id] of evict) this.seen.delete(id)
    }
  }
}
