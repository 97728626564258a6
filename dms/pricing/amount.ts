/**
 * Money: integers of the smallest unit, the **micro-token** (1 token = 1 000 000 micro-tokens).
 * Spec: specs/pricing.md ("Amounts"), specs/contract-db.md ("Money").
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

/** `v` as an Amount; throws when it leaves the safe range. */
export const toAmount = (v: bigint, what: string): Amount => {
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new InvalidAmountError(what, v)
  return Number(v)
}

/** ceil(a / b) for non-negative bigints. */
export const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b

/** Sums amounts exactly; throws if the sum leaves the safe range. */
export function sum(amounts: Amount[]): Amount {
  return toAmount(
    amounts.reduce((a, b) => a + BigInt(b), 0n),
    'sum',
  )
}
