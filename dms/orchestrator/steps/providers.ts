/**
 * How the steps reach a job's providers: the winner's handle, and the best-effort bid releases
 * that free what a bidder holds for a bid that will not be used.
 */
import type { Handle } from '../../../actors/envelope.js'
import type { Bid } from '../../contracts/model.js'
import { W } from '../../protocol/behaviours.js'
import { handleOf, INBOX } from '../../protocol/handles.js'
import type { JobRecord } from '../job-record.js'
import type { StepDeps } from './deps.js'

/** A bidder's addresses: as it sent its bid in this round, else as the record kept them. */
const addrsOf = (session: StepDeps['session'], job: JobRecord, peer: string): string[] | undefined =>
  session.providerAddrs.get(peer) ?? job.providerAddrs?.[peer]

/** The winning provider's inbox. */
export function winnerHandle(session: StepDeps['session'], job: JobRecord): Handle {
  const peer = job.winner?.provider as string
  return handleOf(peer, INBOX.provider, addrsOf(session, job, peer))
}

/** `/dms/job/bid-release` to the bidder of `bid`, best effort: it frees what it holds for it. */
export function releaseBid(d: Pick<StepDeps, 'actor' | 'session'>, job: JobRecord, bid: Bid): void {
  sendBidRelease(d, job, bid).catch(() => undefined)
}

/** `/dms/job/bid-release` to the bidder of `bid`; resolves once sent (quotes wait for it). */
export function sendBidRelease(
  d: Pick<StepDeps, 'actor' | 'session'>,
  job: JobRecord,
  bid: Bid,
): Promise<void> {
  return d.actor.send(
    handleOf(bid.provider, INBOX.provider, addrsOf(d.session, job, bid.provider)),
    W.bidRelease,
    { jobId: job.id, bidId: bid.bidId },
  )
}

/**
 * Tells every other bidder of this round that its bid lost, so it frees the resources it reserved
 * now instead of at the bid's expiry (a provider otherwise stays "full" of losing bids).
 */
export function releaseLosers(d: Pick<StepDeps, 'actor' | 'session'>, job: JobRecord): void {
  for (const b of job.bids) if (b.bidId !== job.winner?.bidId) releaseBid(d, job, b)
}
