/**
 * Money in the contract-db: amounts live in dms/pricing/amount.ts (micro-tokens, bigint
 * arithmetic), prices in dms/pricing/. Spec: specs/contract-db.md ("Money"), specs/pricing.md.
 */
import { InvalidAmountError, isAmount, sum, type Amount } from '../pricing/amount.js'
import { costOfTime } from '../pricing/per-time.js'
import { bill, escrowFor as escrowOfPrice, type BillEvent } from '../pricing/price.js'
import { perHour, priceOf } from '../pricing/terms.js'
import type { ContractTerms } from './model.js'

export { InvalidAmountError, isAmount, sum, type Amount }

/** What `ms` milliseconds cost at `pricePerHour`, rounded up to a whole micro-token. */
export function costOfMs(ms: number, pricePerHour: Amount): Amount {
  return costOfTime(ms, { rate: pricePerHour, unit: 'hour' })
}

/**
 * A per-hour bid's total, which is also the escrow locked for it: price × max duration, at least
 * the provider's minimum job price. 0 only for a volunteer job (price 0 and minimum 0).
 */
export function escrowFor(pricePerHour: Amount, maxDurationSeconds: number, minJobPrice: Amount): Amount {
  if (!Number.isSafeInteger(maxDurationSeconds) || maxDurationSeconds < 0)
    throw new InvalidAmountError('max duration (seconds)', maxDurationSeconds)
  return escrowOfPrice(perHour(pricePerHour, minJobPrice), { durationSeconds: maxDurationSeconds })
}

/** Wall seconds (possibly fractional) as whole billed milliseconds, rounded up and capped. */
export function billableMs(wallSeconds: number, maxDurationSeconds: number): number {
  const ms = Number.isFinite(wallSeconds) && wallSeconds > 0 ? Math.ceil(wallSeconds * 1000) : 0
  return Math.min(ms, maxDurationSeconds * 1000)
}

/**
 * What `e` pays under a contract's price: its embedded bid's terms (pricing's `bill`) for the
 * bid's max duration, capped at the escrow. A bid with no price (refused at verification) pays
 * nothing.
 */
export function billOf(t: ContractTerms, e: BillEvent): Amount {
  const price = priceOf(t.bid)
  return price === undefined ? 0 : bill(price, e, t.escrow, { durationSeconds: t.bid.maxDurationSeconds })
}
