/**
 * What a running allocation's time costs so far, at its contract's price: what a cancel now would
 * pay (dms/pricing/: wall time capped at the contract's maximum duration, for a per-time price;
 * nothing yet for a per-result price). Spec: specs/pricing.md.
 */
import type { ContractTerms } from '../contracts/model.js'
import { billableMs, billOf, type Amount } from '../contracts/money.js'
import { termsMaxDuration } from '../contracts/terms.js'

export function costSoFar(terms: ContractTerms, wallSeconds: number): Amount {
  return billOf(terms, { kind: 'cancel', ms: billableMs(wallSeconds, termsMaxDuration(terms)) })
}
