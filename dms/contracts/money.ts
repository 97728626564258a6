/**
 * Money in the contract-db: integers of the smallest unit, the **micro-token** (1 token =
 * 1 000 000 micro-tokens). Spec: specs/contract-db.md ("Money").
 *
 * Amounts are JavaScript numbers that must be safe integers; every product and quotient is done in
 * bigint, so no floating point ever decides an amount.
 */
import { DmsError } from '../../actors/errors.js'

/** An amount of micro-tokens: a non-negative safe integer. */
export type Amount = number

/** true for a non-negative safe integer. */
export function isAmount(v: unknown): v is Amount {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
}

export class InvalidAmountError extends DmsError {
  constructor(what: string, value: unknown) {
    super(
      'INVALID_AMOUNT',
      `${what} must be a whole number of micro-tokens (a safe integer ≥ 0), got ${String(value)}`,
    )
  }
}

const toAmount = (v: bigint, what: string): Amount => {
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new InvalidAmountError(what, v)
  return Number(v)
}

/** ceil(a / b) for non-negative bigints. */
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b

/** What `ms` milliseconds cost at `pricePerHour`, rounded up to a whole micro-token. */
export function costOfMs(ms: number, pricePerHour: Amount): Amount {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new InvalidAmountError('billed milliseconds', ms)
  if (!isAmount(pricePerHour)) throw new InvalidAmountError('price per hour', pricePerHour)
  return toAmount(ceilDiv(BigInt(ms) * BigInt(pricePerHour), 3_600_000n), 'cost')
}

/**
 * A bid's total, which is also the escrow locked for it: price × max duration, at least the
 * provider's minimum job price. 0 only for a volunteer job (price 0 and minimum 0).
 */
export function escrowFor(pricePerHour: Amount, maxDurationSeconds: number, minJobPrice: Amount): Amount {
  if (!Number.isSafeInteger(maxDurationSeconds) || maxDurationSeconds < 0)
    throw new InvalidAmountError('max duration (seconds)', maxDurationSeconds)
  if (!isAmount(minJobPrice)) throw new InvalidAmountError('minimum job price', minJobPrice)
  const cost = costOfMs(maxDurationSeconds * 1000, pricePerHour)
  return Math.max(minJobPrice, cost)
}

/** Wall seconds (possibly fractional) as whole billed milliseconds, rounded up and capped. */
export function billableMs(wallSeconds: number, maxDurationSeconds: number): number {
  const ms = Number.isFinite(wallSeconds) && wallSeconds > 0 ? Math.ceil(wallSeconds * 1000) : 0
  return Math.min(ms, maxDurationSeconds * 1000)
}

/** Sums amounts exactly; throws if the sum leaves the safe range. */
export function sum(amounts: Amount[]): Amount {
  return toAmount(
    amounts.reduce((a, b) => a + BigInt(b), 0n),
    'sum',
  )
}
