import type { Bid } from '../contracts/model.js'

/**
 * The documented weighted ranking (specs/job-spec.md, "Selection"). Each bid gets a score in
 * [0, 1], lower is better:
 *
 *   score = 0.6 × price + 0.2 × finish + 0.2 × unreliability
 *
 * Every term comes from facts this requester checks itself, so no self-reported number can win
 * by lying:
 * - price: the bid's total / the job's price ceiling (1 when the ceiling is 0); the total is
 *   checked against price × max duration (what the contract-db will lock) before ranking;
 * - finish: computed here as max(earliestStart, now) + the job's max duration, then
 *   (finish − the earliest finish among the bids) / the max duration, capped at 1. A provider can
 *   only make its own bid worse by naming a later start; an earlier one than now counts as now;
 * - unreliability: 1 − reliability, reliability = (completed + 1) / (completed + faults + 2) from
 *   this requester's own record of the provider (0.5 for a provider never used).
 *
 * Ties go to the lower total, then the bid id (deterministic). A bid's own `expectedFinish` is
 * not used, and there is no "fit" term: how full a provider is cannot be checked.
 */
export const WEIGHTS = { price: 0.6, finish: 0.2, unreliability: 0.2 } as const

export interface RankContext {
  maxPrice: number
  maxDurationSeconds: number
  reliability: Record<string, number>
  /** When the bids are ranked (ms epoch): no start counts as earlier. */
  now: number
}

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
  terms: { price: number; finish: number; unreliability: number }
}

const round = (n: number) => Math.round(n * 1000) / 1000

export function scoreBids(bids: Bid[], ctx: RankContext): RankedBid[] {
  const finishOf = (b: Bid) => Math.max(b.earliestStart, ctx.now) + ctx.maxDurationSeconds * 1000
  const firstFinish = Math.min(...bids.map(finishOf))
  const ranked = bids.map((b) => {
    const terms = {
      price: ctx.maxPrice > 0 ? Math.min(1, b.total / ctx.maxPrice) : 1,
      finish: Math.min(1, (finishOf(b) - firstFinish) / (ctx.maxDurationSeconds * 1000)),
      unreliability: 1 - (ctx.reliability[b.provider] ?? 0.5),
    }
    const score =
      WEIGHTS.price * terms.price +
      WEIGHTS.finish * terms.finish +
      WEIGHTS.unreliability * terms.unreliability
    return { bid: b, r: { bidId: b.bidId, provider: b.provider, score: round(score), terms } }
  })
  ranked.sort(
    (x, y) => x.r.score - y.r.score || x.bid.total - y.bid.total || x.bid.bidId.localeCompare(y.bid.bidId),
  )
  return ranked.map((x) => x.r)
}

/** Ranks bids, best first, each with why it ranks there. */
export function rankBids(bids: Bid[], ctx: RankContext): Array<[Bid, string]> {
  const ranked = scoreBids(bids, ctx)
  const byId = new Map(bids.map((b) => [b.bidId, b]))
  const explain = (r: RankedBid) =>
    `score ${r.score} (price ${round(r.terms.price)}, finish ${round(r.terms.finish)}, unreliability ${round(r.terms.unreliability)})`
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
