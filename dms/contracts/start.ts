/**
 * The start deadline of a contract (specs/contract-db.md, "Start notes"): the requester sets
 * `startBy` = max(createdAt, bid.earliestStart) + its start grace; the provider tells the
 * contract-db it started the run with a signed start note, and waits for the answer before it
 * starts the container; a contract with no start note by `startBy` is expired with a full refund.
 * These are the checks and documents the three parties share.
 */
import type { KeyPair } from '../../actors/identity.js'
import { signDoc } from './canonical.js'
import { DOMAIN, type Bid, type ContractTerms, type SignedStartNote } from './model.js'

/** The requester's default start grace (`requester.startGraceSeconds`). */
export const DEFAULT_START_GRACE_SECONDS = 120
/** The longest start grace a contract may carry: startBy - max(createdAt, earliestStart). */
export const MAX_START_GRACE_SECONDS = 3600

/** Refusal code of a start note (or an invocation) past the contract's `startBy`. */
export const START_DEADLINE_PASSED = 'START_DEADLINE_PASSED'

/** When the run can start at the earliest: the draft's time, or later if the provider bid so. */
export const startBaseOf = (t: Pick<ContractTerms, 'createdAt'>, bid: Pick<Bid, 'earliestStart'>): number =>
  Math.max(t.createdAt, bid.earliestStart)

/** The requester's `startBy` for terms drafted at `createdAt` on `bid`. */
export function startByFor(createdAt: number, bid: Pick<Bid, 'earliestStart'>, graceSeconds: number): number {
  return startBaseOf({ createdAt }, bid) + graceSeconds * 1000
}

/**
 * Why the terms' `startBy` is out of bounds (not a whole number of ms, before the run can start,
 * or more than MAX_START_GRACE_SECONDS after it), or undefined; absent is fine (no deadline).
 */
export function startByProblem(t: ContractTerms, bid: Pick<Bid, 'earliestStart'>): string | undefined {
  if (t.startBy === undefined) return undefined
  if (!Number.isSafeInteger(t.startBy)) return 'startBy must be a whole number of milliseconds'
  if (!Number.isSafeInteger(t.createdAt) || !Number.isSafeInteger(bid.earliestStart))
    return 'createdAt and the bid earliestStart must be whole numbers of milliseconds'
  const base = startBaseOf(t, bid)
  if (t.startBy <= base) return `startBy must be after max(createdAt, the bid's earliestStart) (${base})`
  if (t.startBy > base + MAX_START_GRACE_SECONDS * 1000)
    return `startBy may be at most ${MAX_START_GRACE_SECONDS} s after max(createdAt, the bid's earliestStart)`
  return undefined
}

/** The provider's signed start note for `contractId`. */
export function signStartNote(
  key: KeyPair,
  provider: string,
  contractId: string,
  at: number,
): SignedStartNote {
  const note = { contractId, provider, at }
  return { note, signature: signDoc(key, DOMAIN.startNote, note) }
}
