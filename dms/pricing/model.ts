/**
 * The seam every price model sits behind: how its terms are checked, what its escrow is, and what
 * each way a contract closes pays. Spec: specs/pricing.md ("Models").
 */
import type { Amount } from './amount.js'
import type { PriceTerms, TimeBid } from './terms.js'

/** How a receipt's run ended (the provider's signed `Receipt.status` and `exitCode`). */
export interface RunOutcome {
  status: 'completed' | 'failed' | 'timed_out' | 'cancelled'
  exitCode: number
}

/**
 * What closes a contract with pay, as the contract-db decided it:
 * - `result`: a receipt that counts (verified, a rejection overruled, or claimed when the
 *   requester stayed silent), with its billed wall time;
 * - `cancel`: the requester cancelled, with the wall time used.
 * A provider fault, an upheld rejection and an expiry pay nothing in every model.
 */
export type BillEvent = ({ kind: 'result' } & RunOutcome & { ms: number }) | { kind: 'cancel'; ms: number }

/** One price model's rules. */
export interface PriceModelRules<P extends PriceTerms = PriceTerms> {
  /** Why `p` (already of this model and shape) is not acceptable terms, or undefined. */
  problem(p: P): string | undefined
  /** The escrow: the most a contract for `time` can pay. */
  escrow(p: P, time: TimeBid): Amount
  /** What `e` pays for a contract for `time`, before the cap at the escrow. */
  bill(p: P, e: BillEvent, time: TimeBid): Amount
  /** For a person: "3600/hour", "500 per result", "500 fixed". */
  describe(p: P): string
}
