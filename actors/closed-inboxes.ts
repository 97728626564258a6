/**
 * The inboxes closed lately (a despawned actor, a request that timed out): a frame for one of them
 * is a late arrival, dropped quietly, not a refusal (specs/protocol.md "Receive pipeline"). Each is
 * remembered for the longest time-to-live a frame may have, at most `limit` of them.
 */
export class ClosedInboxes {
  private readonly until = new Map<string, number>()

  constructor(
    private readonly limit: number,
    private readonly ttlMs: number,
  ) {}

  remember(inbox: string, now: number): void {
    // Every entry lives ttlMs, so insertion order is expiry order: trim from the oldest, O(1).
    for (const [k, until] of this.until) {
      if (until > now && this.until.size < this.limit) break
      this.until.delete(k)
    }
    this.until.delete(inbox)
    this.until.set(inbox, now + this.ttlMs)
  }

  /** An inbox open again (spawned anew) is no longer closed. */
  forget(inbox: string): void {
    this.until.delete(inbox)
  }

  recentlyClosed(inbox: string, now: number): boolean {
    const until = this.until.get(inbox)
    return until !== undefined && until > now
  }
}
