/**
 * What closing a contract pays: the billing rules of specs/contract-db.md ("Billing", "Terminate"),
 * pure functions of the terms, the event that closes the contract and the time.
 */
import { TERMINATION, type ContractTerms, type Receipt, type TerminationReason } from '../contracts/model.js'
import { billableMs, billOf, type Amount } from '../contracts/money.js'
import { termsMaxDuration } from '../contracts/terms.js'
import type { Arbitration } from './records.js'

/** Settle: the provider's checked receipt, the requester's verdict on it, and the check of a rejection. */
export interface SettleFacts {
  receipt: Receipt
  verified: boolean
  /** A rejection (`verified` false) checked by the contract-db (arbiter.ts). */
  arbitration?: Arbitration
}

/** Terminate: the reason, and for a cancel the wall time used (from the receipt when one came). */
export interface TerminateFacts {
  reason: typeof TERMINATION.providerFault | typeof TERMINATION.requesterCancelled
  /** @default the time since the escrow was locked */
  wallSeconds?: number
}

/** How a contract closes. */
export interface Closing {
  /** The state it rests in once closed. @default outcome */
  to?: 'claimed' | 'expired'
  outcome: 'settled' | 'terminated'
  reason?: TerminationReason
  /** Paid to the provider, at most the escrow; the rest is refunded. */
  paid: Amount
  /** Billed wall time, whole milliseconds. */
  ms: number
}

/**
 * What a receipt that counts pays, by the bid's price model (specs/pricing.md): per time, usage ×
 * rate, at least the minimum for a completed run, nothing for a run that never started (failed
 * with exit code < 0); always capped at the escrow.
 */
export function billFor(receipt: Receipt, ms: number, t: ContractTerms): Amount {
  return billOf(t, { kind: 'result', status: receipt.status, exitCode: receipt.exitCode, ms })
}

/**
 * The billed time of a receipt's usage: its wall time, rounded up to the millisecond, capped at
 * the max duration and at what the contract-db observed (from the escrow's lock to now), since a
 * provider signs its own receipt and a run cannot have lasted longer than the contract has.
 */
export function observedMs(wallSeconds: number, t: ContractTerms, at: Observed): number {
  return Math.min(billableMs(wallSeconds, termsMaxDuration(t)), Math.max(0, at.now - at.activatedAt))
}

/** What the contract-db saw of a contract's time: when its escrow was locked, and now. */
export interface Observed {
  activatedAt: number
  now: number
}

/**
 * A settlement: paid by the receipt when verified (its usage capped at the observed time), or when
 * the contract-db overruled the rejection (reason REJECTION_OVERRULED); else terminated with a
 * full refund.
 */
export function settleClosing(t: ContractTerms, f: SettleFacts, at: Observed): Closing {
  const ms = observedMs(f.receipt.usage.wallSeconds, t, at)
  if (!f.verified && f.arbitration?.outcome === 'overruled')
    return { outcome: 'settled', reason: TERMINATION.rejectionOverruled, paid: billFor(f.receipt, ms, t), ms }
  if (!f.verified) return { outcome: 'terminated', reason: TERMINATION.rejectedResult, paid: 0, ms }
  return { outcome: 'settled', paid: billFor(f.receipt, ms, t), ms }
}

/**
 * A termination: a provider fault refunds everything; a cancel pays what the price model bills
 * for the time used (per time: that time), from the receipt if one came (capped at the observed
 * time), else since `activatedAt`.
 */
export function terminateClosing(t: ContractTerms, f: TerminateFacts, at: Observed): Closing {
  if (f.reason === TERMINATION.providerFault)
    return { outcome: 'terminated', reason: f.reason, paid: 0, ms: 0 }
  const ms = observedMs(f.wallSeconds ?? (at.now - at.activatedAt) / 1000, t, at)
  return {
    outcome: 'terminated',
    reason: f.reason,
    paid: billOf(t, { kind: 'cancel', ms }),
    ms,
  }
}

/**
 * A provider's claim past `settleBy`: paid by its receipt as a verified settlement would be (usage
 * capped at the observed time), with reason REQUESTER_SILENT.
 */
export function claimClosing(t: ContractTerms, receipt: Receipt, at: Observed): Closing {
  const ms = observedMs(receipt.usage.wallSeconds, t, at)
  return {
    to: 'claimed',
    outcome: 'settled',
    reason: TERMINATION.requesterSilent,
    paid: billFor(receipt, ms, t),
    ms,
  }
}

/** Expired by the contract-db (nobody settled or claimed in time): the whole escrow is refunded. */
export function expireClosing(): Closing {
  return { to: 'expired', outcome: 'terminated', reason: TERMINATION.expired, paid: 0, ms: 0 }
}
