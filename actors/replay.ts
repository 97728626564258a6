/**
 * Remembers nonces until their envelope expires, so a replayed envelope is refused. Bounded: when
 * full, the entry expiring soonest is evicted (an envelope's lifetime is capped by the receiver, so
 * an evicted nonce's envelope is close to expiry anyway).
 */
export class ReplayCache {
  private readonly seen = new Map<string, number>()
  constructor(private readonly max = 100_000) {}

  /** Records the nonce; false when it was already seen and has not expired. */
  check(nonce: Uint8Array, expiresAt: number, now: number): boolean {
    const id = Buffer.from(nonce).toString('base64')
    const prev = this.seen.get(id)
    if (prev !== undefined && prev > now) return false
    if (this.seen.size >= this.max) this.prune(now)
    this.seen.set(id, expiresAt)
    return true
  }

  get size(): number {
    return this.seen.size
  }

  private prune(now: number): void {
    for (const [id, exp] of this.seen) if (exp <= now) this.seen.delete(id)
    // Still full of live nonces: evict the tenth expiring soonest (sorting only happens when full).
    if (this.seen.size >= this.max) {
      const byExpiry = [...this.seen].sort((a, b) => a[1] - b[1])
      for (const [id] of byExpiry.slice(0, Math.ceil(this.max / 10))) this.seen.delete(id)
    }
  }
}
