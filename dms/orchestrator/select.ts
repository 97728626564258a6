import type { Bid } from '../messages.js'

/**
 * The documented weighted ranking (specs/job-spec.md, "Selection"). Each bid gets a score in
 * [0, 1], lower is better:
 *
 *   score = 0.5 × price + 0.2 × finish + 0.1 × fit + 0.2 × unreliability
 *
 * - price: the bid's total / the job's price ceiling (1 when the ceiling is 0);
 * - finish: (expectedFinish − the earliest expectedFinish among the bids) / the max duration, capped at 1;
 * - fit: the bid's `fit`, the share of the provider's free capacity the job leaves unused (best fit
 *   first, which keeps larger providers free for larger jobs); 0.5 when the provider did not say;
 * - unreliability: 1 − reliability, reliability = (completed + 1) / (completed + faults + 2) from
 *   this requester's own record of the provider (0.5 for a provider never used).
 *
 * Ties go to the lower total, then the bid id (deterministic).
 */
export const WEIGHTS = { price: 0.5, finish: 0.2, fit: 0.1, unreliability: 0.2 } as const

/** A provider's record with this requester. */
export interface ProviderRecord {
  completed: number
  faults: number
}

export const reliabilityOf = (r: ProviderRecord | undefined): number =>
  ((r?.completed ?? 0) + 1) / ((r?.completed ?? 0) + (r?.faults ?? 0) + 2)

export interface RankedBid {
  bidId: string
  provider: string
  score: number
  terms: { price: number; finish: number; fit: number; unreliability: number }
}

const round = (n: number) => Math.round(n * 1000) / 1000

export function scoreBids(
  bids: Bid[],
  ctx: { maxPrice: number; maxDurationSeconds: number; reliability: Record<string, number> },
): RankedBid[] {
  const firstFinish = Math.min(...bids.map((b) => b.expectedFinish))
  const ranked = bids.map((b) => {
    const terms = {
      price: ctx.maxPrice > 0 ? Math.min(1, b.total / ctx.maxPrice) : 1,
      finish: Math.min(1, (b.expectedFinish - firstFinish) / (ctx.maxDurationSeconds * 1000)),
      fit: typeof b.fit === 'number' ? Math.min(1, Math.max(0, b.fit)) : 0.5,
      unreliability: 1 - (ctx.reliability[b.provider] ?? 0.5),
    }
    const score =
      WEIGHTS.price * terms.price +
      WEIGHTS.finish * terms.finish +
      WEIGHTS.fit * terms.fit +
      WEIGHTS.unreliability * terms.unreliability
    return { bid: b, r: { bidId: b.bidId, provider: b.provider, score: round(score), terms } }
  })
  ranked.sort(
    (x, y) => x.r.score - y.r.score || x.bid.total - y.bid.total || x.bid.bidId.localeCompare(y.bid.bidId),
  )
  return ranked.map((x) => x.r)
}

/** Ranks bids, best first, each with why it ranks there. */
export function rankBids(
  bids: Bid[],
  ctx: { maxPrice: number; maxDurationSeconds: number; reliability: Record<string, number> },
): Array<[Bid, string]> {
  const ranked = scoreBids(bids, ctx)
  const byId = new Map(bids.map((b) => [b.bidId, b]))
  const explain = (r: RankedBid) =>
    `score ${r.score} (price ${round(r.terms.price)}, finish ${round(r.terms.finish)}, fit ${round(r.terms.fit)}, unreliability ${round(r.terms.unreliability)})`
  return ranked.map((r, i) => {
    const bid = byId.get(r.bidId) as Bid
    if (i > 0) return [bid, `rank ${i + 1}: ${explain(r)}`]
    const next = ranked[1]
    return [
      bid,
      next === undefined
        ? `only bid: total ${bid.total}, ${explain(r)}`
        : `lowest score of ${ranked.length} bids: total ${bid.total}, ${explain(r)}; next ${next.provider.slice(-8)} scored ${next.score}`,
    ]
  })
}
