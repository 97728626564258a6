/**
 * What a running allocation's time costs so far, at its contract's price: the settlement bills
 * wall time, capped at the contract's maximum duration (specs/contract-db.md, "Billing"). One
 * function, so the price model (dms/pricing/, issue 30) replaces it in one place.
 */
import type { ContractTerms } from '../contracts/model.js'
import { billableMs, costOfMs, type Amount } from '../contracts/money.js'

export function costSoFar(
  terms: Pick<ContractTerms, 'maxDurationSeconds' | 'pricePerHour'>,
  wallSeconds: number,
): Amount {
  return costOfMs(billableMs(wallSeconds, terms.maxDurationSeconds), terms.pricePerHour)
}
