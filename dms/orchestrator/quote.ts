/**
 * A quote: one bid round for a spec without locking or contracting (`POST /v1/quotes`). The round
 * is the job's own (`collectBids`, the same bid request, window and admission, under a fresh job
 * id), so providers decide exactly as for a job: they bid or decline with reasons. The request
 * says it is a quote, so they reserve nothing (a quote loop would otherwise hold their offers and
 * starve other requesters' jobs, issue 29); a bid that says it reserved (a provider of an older
 * release) is released at once (`/dms/job/bid-release`). Nothing is stored. Spec:
 * specs/queueing.md ("Quotes").
 */
import { randomUUID } from 'node:crypto'
import type { Bid } from '../contracts/model.js'
import { priceView } from '../pricing/price.js'
import { priceOf } from '../pricing/terms.js'
import { spawnJobActor } from './job-inbox.js'
import type { JobRecord } from './job-record.js'
import type { JobSpec } from './job-spec.js'
import type { JobParts } from './running-job.js'
import { rankBids } from './select.js'
import { JobSession } from './session.js'
import { collectBidsStep } from './steps/collect-bids.js'
import { sendBidRelease } from './steps/providers.js'

export interface QuoteBid {
  provider: string
  bidId: string
  /** The total for the max duration (what the contract-db would lock). */
  total: number
  /** The bid's price for a person ("3600/hour", specs/pricing.md). */
  price: string
  /** The per-hour rate, for a bid priced per hour only. */
  pricePerHour?: number
  earliestStart: number
  expectedFinish: number
  /** Its rank among the bids by the job's own ranking (1: the one a job would take). */
  rank: number
  why: string
}

export interface Quote {
  /** The round's job id (providers saw it; no job is stored under it). */
  quoteId: string
  bids: QuoteBid[]
  declines: Array<{ provider: string; reasons: string[] }>
  /**
   * Bid releases delivered right after the round, for bids that reserved anyway (a provider of an
   * older release; one whose release was lost lapses at its expiry). 0 with today's providers.
   */
  released: number
}

export type QuoteParts = Omit<JobParts, 'onUpdate' | 'onLog' | 'contractDb' | 'blobs'>

export async function runQuote(spec: JobSpec, p: QuoteParts, signal: AbortSignal): Promise<Quote> {
  const record: JobRecord = {
    id: randomUUID(),
    spec,
    createdAt: p.clock.now(),
    history: [],
    bids: [],
    declines: [],
    tried: [],
    updates: [],
  }
  const session = new JobSession(p.clock)
  const actor = spawnJobActor(record.id, {
    system: p.system,
    clock: p.clock,
    log: p.log,
    admission: p.admission,
    session,
    view: () => ({ state: 'bidding', record }),
    onUpdate: () => undefined,
    onLog: () => undefined,
  })
  try {
    const round = await collectBidsStep({ ...p, actor, session }, { quote: true })(record, signal)
    const bids: Bid[] = round.bids ?? []
    const sent = await Promise.allSettled(
      bids.filter((b) => b.resourcesReserved).map((b) => sendBidRelease({ actor, session }, record, b)),
    )
    const ranked = rankBids(bids, {
      maxPrice: spec.maxPrice,
      maxDurationSeconds: spec.maxDurationSeconds,
      reliability: round.reliability ?? {},
      now: p.clock.now(),
    })
    return {
      quoteId: record.id,
      bids: ranked.map(([b, why], i) => ({
        provider: b.provider,
        bidId: b.bidId,
        total: b.total,
        ...priceView(priceOf(b)),
        earliestStart: b.earliestStart,
        expectedFinish: b.expectedFinish,
        rank: i + 1,
        why,
      })),
      declines: (round.declines ?? []).map((d) => ({ provider: d.provider, reasons: d.reasons })),
      released: sent.filter((r) => r.status === 'fulfilled').length,
    }
  } finally {
    actor.stop()
  }
}
