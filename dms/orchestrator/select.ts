import type { Bid } from '../messages.js'

/**
 * Ranks bids, best first, each with why it ranks there. Skeleton policy: lowest total price,
 * then earliest expected finish, then bid id (deterministic). Spec: specs/protocol.md ("Selection").
 */
export function rankBids(bids: Bid[]): Array<[Bid, string]> {
  const sorted = [...bids].sort(
    (a, b) => a.total - b.total || a.expectedFinish - b.expectedFinish || a.bidId.localeCompare(b.bidId),
  )
  return sorted.map((b, i) => [
    b,
    i === 0
      ? sorted.length === 1
        ? `only bid (total ${b.total})`
        : `lowest total price ${b.total} of ${sorted.length} bids (next: ${sorted[1].total})`
      : `rank ${i + 1}: total ${b.total}`,
  ])
}
