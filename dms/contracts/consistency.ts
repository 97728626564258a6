/**
 * "These terms are what was bid for", written once for the three parties: the requester (bids it
 * ranks, terms it drafts), the provider (terms it countersigns) and the contract-db (terms it
 * verifies). Each check returns a reason for a person, or undefined when they agree. Signatures
 * are the caller's business. Spec: specs/protocol.md ("Document signatures"), specs/contract-db.md.
 */
import type { Resources } from '../resources/types.js'
import { hashDoc } from './canonical.js'
import type { ContractTerms, Bid } from './model.js'
import { InvalidAmountError, isAmount } from '../pricing/amount.js'
import { escrowFor, priceProblem } from '../pricing/price.js'
import { priceOf, type PriceTerms } from '../pricing/terms.js'
import { startByProblem } from './start.js'
import { isWorkloadHash } from '../workload/hash.js'

/** What a bid request asked for, which its bids (and their contracts) must repeat exactly. */
export interface Asked {
  image: string
  maxDurationSeconds: number
  resources: Resources
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

/** Why `bid` is not for exactly what was asked (image, max duration, resources), or undefined. */
export function bidAskedProblem(bid: Bid, asked: Asked): string | undefined {
  if (bid.image !== asked.image) return `image ${bid.image} differs from the ${asked.image} asked for`
  if (bid.maxDurationSeconds !== asked.maxDurationSeconds)
    return `max duration ${bid.maxDurationSeconds}s differs from the ${asked.maxDurationSeconds}s asked for`
  if (hashDoc(bid.resources) !== hashDoc(asked.resources)) return 'resources differ from those asked for'
  return undefined
}

/**
 * A bid's price terms (`priceOf`: its `price`, or a dms 0.1 bid's `pricePerHour` and
 * `minJobPrice` as per-hour terms), or a reason when it has none, both, or terms this node does not
 * accept (pricing's `priceProblem`: unknown model, currency or unit, an amount out of range).
 */
export function bidPrice(bid: Bid): PriceTerms | string {
  if (bid.price !== undefined && (bid.pricePerHour !== undefined || bid.minJobPrice !== undefined))
    return 'bid: price terms and a per-hour price both given'
  if (bid.price === undefined && !isAmount(bid.minJobPrice))
    return `bid: ${new InvalidAmountError('minimum job price', bid.minJobPrice).message}`
  const price = priceOf(bid)
  if (price === undefined) return 'bid: no price'
  const problem = priceProblem(price)
  return problem === undefined ? price : `bid: ${problem}`
}

/**
 * The escrow a bid asks to lock: its price terms' escrow for the max duration (pricing's
 * `escrowFor`); a reason instead when that cannot be computed.
 */
function escrowOf(bid: Bid): number | string {
  const price = bidPrice(bid)
  if (typeof price === 'string') return price
  try {
    return escrowFor(price, { durationSeconds: bid.maxDurationSeconds })
  } catch (err) {
    return err instanceof InvalidAmountError ? `bid: ${err.message}` : String(err)
  }
}

/** Why a bid's total is not exactly what the contract-db will lock for it, or undefined. */
export function bidTotalProblem(bid: Bid): string | undefined {
  const total = escrowOf(bid)
  if (typeof total === 'string') return total
  if (bid.total !== total) return `the bid's total ${bid.total} is not price × max duration (${total})`
  return undefined
}

/**
 * Why contract terms `t` do not agree with the provider's bid `bid`: the same bid, job and
 * provider, a max duration of whole seconds, and an escrow equal to the bid's total, which is
 * itself its price terms' escrow for the max duration. What was bid for (image, resources, max
 * duration, price) is the bid's: terms of this version copy none of it (terms.ts reads it); a copy
 * that terms of an earlier version carry (`image`, `resources`, `maxDurationSeconds`, dms 0.1's
 * `pricePerHour`) must equal the bid's. A `startBy`, when there is one, after the time the run can
 * start and at most MAX_START_GRACE_SECONDS later (start.ts). A `workloadHash`, when there is one,
 * of a sha256's form (whether one is required is signed-workload.ts's). Undefined when they agree.
 */
export function termsBidProblem(t: ContractTerms, bid: Bid): string | undefined {
  if (bid.provider !== t.provider?.peer) return 'the bid was made by another provider'
  if (bid.bidId !== t.bidId) return `bid id ${String(t.bidId)} differs from the bid's ${bid.bidId}`
  if (bid.jobId !== t.jobId) return `job ${String(t.jobId)} differs from the bid's job ${bid.jobId}`
  // An earlier version's copies: one that disagrees with the bid would make the contract read two
  // ways, so it is refused; terms without them read the signed bid's (terms.ts).
  if (t.image !== undefined && t.image !== bid.image)
    return `image ${String(t.image)} differs from the bid's ${bid.image}`
  if (t.resources !== undefined && (!isObj(t.resources) || hashDoc(bid.resources) !== hashDoc(t.resources)))
    return 'resources differ from the bid'
  if (t.pricePerHour !== undefined && (!isAmount(t.pricePerHour) || t.pricePerHour !== bid.pricePerHour))
    return `price ${String(t.pricePerHour)}/hour differs from the bid's ${String(bid.pricePerHour)}`
  if (t.maxDurationSeconds !== undefined && t.maxDurationSeconds !== bid.maxDurationSeconds)
    return `max duration ${String(t.maxDurationSeconds)}s differs from the bid's ${bid.maxDurationSeconds}s`
  if (!Number.isSafeInteger(bid.maxDurationSeconds) || bid.maxDurationSeconds <= 0)
    return 'max duration must be a positive whole number of seconds'
  const total = escrowOf(bid)
  if (typeof total === 'string') return total
  if (bid.total !== total) return `the bid's total ${bid.total} is not price × max duration (${total})`
  if (t.escrow !== total) return `escrow ${String(t.escrow)} must equal price × max duration (${total})`
  if (t.workloadHash !== undefined && !isWorkloadHash(t.workloadHash))
    return 'workloadHash is not a sha256 in lowercase hex'
  return startByProblem(t, bid)
}
