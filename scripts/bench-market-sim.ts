/**
 * The market simulation of scripts/bench-market.ts: the bid sample's decision code
 * (dms/orchestrator/bid-sample.ts) with no network, for large numbers of providers.
 */
import { SamplePlan, sampleOrder } from '../dms/orchestrator/bid-sample.js'

const r1 = (x: number) => Math.round(x * 10) / 10

export interface SimRow {
  providers: number
  canTake: string
  silent: string
  mode: string
  requestsPerJob: number
  answersPerJob: number
  reservationsPerJob: number
  asksPerJob: number
}

/**
 * The same decision code (sampleOrder, SamplePlan) with no network: `providers` peers, of which a
 * share `canTake` would bid and a share `silent` never answers (the rest decline). A direct ask
 * costs one request per peer asked; a gossip ask one delivery per subscriber. Every peer asked
 * that is not silent answers (bid or decline), also after its window closed; each bid holds a
 * reservation. A round ends once `enoughBids` bids are in or after the gossip ask (no clock, so
 * no stragglers rule: the step itself widens less often).
 */
export function simulate(
  providers: number,
  canTake: number,
  silent: number,
  sample: number,
  jobs: number,
  enoughBids: number,
): SimRow {
  const peers = Array.from({ length: providers }, (_, i) => `peer-${i}`)
  // Which peers would bid / stay silent: fixed per peer (by its index), the same for every job.
  const kind = (i: number) =>
    i < silent * providers ? 'silent' : i < (silent + canTake) * providers ? 'bid' : 'decline'
  const kinds = new Map(peers.map((p, i) => [p, kind(i)]))
  let requests = 0
  let answers = 0
  let bids = 0
  let asks = 0
  for (let j = 0; j < jobs; j++) {
    const plan = new SamplePlan(
      sampleOrder(`job-${j}`, peers, () => false),
      sample,
    )
    const bidders = new Set<string>()
    for (let a = plan.next(); a !== undefined; a = plan.next()) {
      asks++
      const asked = a.kind === 'direct' ? a.peers : peers
      requests += asked.length
      for (const p of asked) {
        if (kinds.get(p) === 'silent') continue
        answers++
        // A peer asked again (the gossip after its direct ask) answers with the same bid.
        if (kinds.get(p) === 'bid' && !bidders.has(p)) {
          bidders.add(p)
          bids++
        }
      }
      if (a.kind === 'gossip' || bidders.size >= enoughBids) break
    }
  }
  return {
    providers,
    canTake: `${canTake * 100}%`,
    silent: `${silent * 100}%`,
    mode: sample === 0 ? 'everyone' : `sample ${sample}`,
    requestsPerJob: r1(requests / jobs),
    answersPerJob: r1(answers / jobs),
    reservationsPerJob: r1(bids / jobs),
    asksPerJob: r1(asks / jobs),
  }
}
