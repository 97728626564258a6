/**
 * The provider's side of the price: what it bids for a request, and what a running allocation's
 * time costs so far at its contract's price: what a cancel now would pay (dms/pricing/: wall time
 * capped at the contract's maximum duration, for a per-time price; nothing yet for a per-result
 * price; the share of the time held, for a fixed price). Spec: specs/pricing.md.
 */
import type { ContractTerms } from '../contracts/model.js'
import { billableMs, billOf, type Amount } from '../contracts/money.js'
import { termsMaxDuration } from '../contracts/terms.js'
import {
  describePrice,
  escrowFor,
  InvalidAmountError,
  quote,
  type PriceOffer,
  type Sized,
} from '../pricing/price.js'
import type { PriceTerms } from '../pricing/terms.js'

/**
 * The price terms this provider bids for `resources` (its `provider.price`, else per hour at its
 * offer's rates) and their escrow for `maxDurationSeconds`, the bid's `total`; a decline reason
 * instead when that escrow is beyond any safe amount (a per-second price over a long job), so such
 * a request is declined, never answered by a throw.
 */
export function priceBid(
  offer: PriceOffer,
  resources: Sized,
  maxDurationSeconds: number,
): { price: PriceTerms; total: Amount } | string {
  const price = quote(offer, resources)
  try {
    return { price, total: escrowFor(price, { durationSeconds: maxDurationSeconds }) }
  } catch (err) {
    if (!(err instanceof InvalidAmountError)) throw err
    return `price ${describePrice(price)} for ${maxDurationSeconds}s is more than any escrow can hold`
  }
}

/** What a running allocation's `wallSeconds` cost so far: what a requester's cancel now would pay. */
export function costSoFar(terms: ContractTerms, wallSeconds: number): Amount {
  return billOf(terms, { kind: 'cancel', ms: billableMs(wallSeconds, termsMaxDuration(terms)) })
}
