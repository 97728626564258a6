/**
 * Who a bid request goes to when many providers are subscribed: a sample of them, widened in
 * rounds while too few bid, so a job's cost does not grow with the network. Pure logic (no
 * timers, no network): the bidding step (steps/collect-bids.ts) and the market simulation
 * (scripts/bench-market-sim.ts) run this same code. Spec: specs/protocol.md, "Bid sample".
 *
 * - The order is fixed per job: peers ranked by sha256(jobId, peerId), the peers known to be
 *   silent (bid-audience.ts) last. A provider cannot move itself or another provider in it: the
 *   job id is the requester's, new for each job, and unknown before the request is sent.
 * - The first `sample` peers of that order are asked over the direct stream; while fewer than
 *   `enoughBids` bids are in, the next batch (twice as large) is asked. Once a batch would be
 *   half or more of the peers not yet asked, the request is published on gossip instead, to
 *   everyone: the old behaviour, which also reaches providers the requester is not connected to.
 * - With at most 2 × `sample` subscribers, or `sample` = 0, the first ask is that gossip one.
 */
import { createHash } from 'node:crypto'

/** Providers asked first when more than twice as many are subscribed (`requester.bidSample`). */
export const DEFAULT_BID_SAMPLE = 8

/** One ask of a bid round: the request sent to these peers directly, or published to everyone. */
export type Ask = { kind: 'direct'; peers: string[] } | { kind: 'gossip' }

/** `peer`'s place for `jobId` (lower asks first): a hash neither the peer nor anyone else picks. */
export function sampleRank(jobId: string, peer: string): string {
  return createHash('sha256').update(jobId).update('\0').update(peer).digest('hex')
}

/** The peers in the order the job asks them: by `sampleRank`, the silent ones last; no repeats. */
export function sampleOrder(
  jobId: string,
  peers: Iterable<string>,
  isSilent: (peer: string) => boolean,
): string[] {
  const ranked = [...new Set(peers)].map((peer) => ({
    peer,
    rank: sampleRank(jobId, peer),
    silent: isSilent(peer),
  }))
  ranked.sort((a, b) => {
    if (a.silent !== b.silent) return a.silent ? 1 : -1
    return a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0
  })
  return ranked.map((r) => r.peer)
}

/** The asks of one bid round over `order` (see the file's comment); ends with a gossip ask. */
export class SamplePlan {
  private asked = 0
  private size: number
  private ended = false

  constructor(
    private readonly order: readonly string[],
    sample: number,
  ) {
    this.size = Math.max(0, Math.floor(sample))
  }

  /** The next ask, or undefined after the gossip one (everyone has been asked). */
  next(): Ask | undefined {
    if (this.ended) return undefined
    const rest = this.order.length - this.asked
    if (this.size === 0 || 2 * this.size >= rest) {
      this.ended = true
      return { kind: 'gossip' }
    }
    const peers = this.order.slice(this.asked, this.asked + this.size)
    this.asked += peers.length
    this.size *= 2
    return { kind: 'direct', peers }
  }
}
