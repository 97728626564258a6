/**
 * Shape and consistency checks on the documents the contract-db receives. Each returns a reason
 * for a person, or undefined when the document is fine. Signatures are checked by the caller.
 */
import { verifyDoc } from './canonical.js'
import {
  DOMAIN,
  MAX_SKIPPED_DETAIL,
  type ContractTerms,
  type SignedReceipt,
  type SignedVerification,
  type Bid,
} from './model.js'
import { termsBidProblem } from './consistency.js'
import { publicKeyOfPeer } from './party.js'

const STATUSES = new Set(['completed', 'failed', 'timed_out', 'cancelled'])
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null
const finiteNonNeg = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0

/** The bid without its signature: the document the provider signed. */
export function bidBody(bid: Bid): Omit<Bid, 'signature'> {
  const { signature: _signature, ...body } = bid
  return body
}

/** true when `bid` carries a valid signature of its provider. */
export function bidSignatureOk(bid: Bid): boolean {
  const key = typeof bid?.provider === 'string' ? publicKeyOfPeer(bid.provider) : undefined
  return (
    key !== undefined &&
    typeof bid.signature === 'string' &&
    verifyDoc(key, DOMAIN.bid, bidBody(bid), bid.signature)
  )
}

/**
 * The terms embed the provider's signed bid and agree with it (consistency.ts): same job, bid and
 * provider, the escrow exactly the bid's total (its price's escrow for the max duration), and any
 * copy of the bid's resources, image, price or max duration that terms of an earlier version
 * carry equal to the bid's. Terms of this version copy none: what was bid for is the bid's.
 */
export function checkBidTerms(t: ContractTerms): string | undefined {
  const bid = t.bid
  if (!isObj(bid)) return 'the contract does not embed the provider bid'
  if (!bidSignatureOk(bid)) return 'the embedded bid is not signed by its provider'
  return termsBidProblem(t, bid)
}

/** The receipt is well formed and about this contract and job. */
export function checkReceipt(signed: SignedReceipt | undefined, t: ContractTerms): string | undefined {
  if (!isObj(signed) || !isObj(signed.receipt) || typeof signed.signature !== 'string')
    return 'no signed receipt'
  const r = signed.receipt
  if (r.contractId !== t.contractId) return 'the receipt is for another contract'
  if (r.jobId !== t.jobId) return 'the receipt is for another job'
  if (!STATUSES.has(r.status)) return `unknown receipt status ${String(r.status)}`
  if (!Number.isSafeInteger(r.exitCode)) return 'receipt exitCode must be an integer'
  if (typeof r.outputsHash !== 'string') return 'receipt outputsHash must be a string'
  const skipped = r.outputsSkipped
  if (
    skipped !== undefined &&
    (!isObj(skipped) ||
      !Number.isSafeInteger(skipped.count) ||
      skipped.count < 0 ||
      typeof skipped.detail !== 'string' ||
      skipped.detail.length > MAX_SKIPPED_DETAIL)
  )
    return `receipt outputsSkipped must be { count, detail } with at most ${MAX_SKIPPED_DETAIL} characters of detail`
  const u = r.usage
  if (
    !isObj(u) ||
    !finiteNonNeg(u.wallSeconds) ||
    !finiteNonNeg(u.cpuSeconds) ||
    !finiteNonNeg(u.peakMemoryBytes)
  )
    return 'receipt usage must hold non-negative wallSeconds, cpuSeconds and peakMemoryBytes'
  if (
    (u.gpuSeconds !== undefined && !finiteNonNeg(u.gpuSeconds)) ||
    (u.gpuPeakMemoryBytes !== undefined && !finiteNonNeg(u.gpuPeakMemoryBytes))
  )
    return 'receipt usage gpuSeconds and gpuPeakMemoryBytes, when present, must be non-negative'
  return undefined
}

/** The verification is well formed and about this receipt. */
export function checkVerification(
  signed: SignedVerification | undefined,
  contractId: string,
  receiptHash: string,
): string | undefined {
  if (!isObj(signed) || !isObj(signed.verification) || typeof signed.signature !== 'string')
    return 'no signed verification'
  const v = signed.verification
  if (v.contractId !== contractId) return 'the verification is for another contract'
  if (v.receiptHash !== receiptHash) return 'the verification is about another receipt'
  if (typeof v.verified !== 'boolean') return 'verification.verified must be true or false'
  return undefined
}
