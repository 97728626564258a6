/**
 * What a run costs, declared once: the price terms a provider signs into its bid and every party
 * reads from there (the requester's selection and quote, the provider's bid, the contract-db's
 * escrow and settlement). Spec: specs/pricing.md.
 */
import { isAmount, type Amount } from './amount.js'

/** The one currency today: integers of micro-tokens (amount.ts). */
export const CURRENCY = 'micro-token'
export type Currency = typeof CURRENCY

/** The largest amount any price terms may name: a million tokens (refused above, as absurd). */
export const MAX_PRICE = 10 ** 12

/** true for an amount a price may name: a whole number of micro-tokens, at most MAX_PRICE. */
export const isPrice = (v: unknown): v is Amount => isAmount(v) && v <= MAX_PRICE

/** Time units a per-time price may be quoted in, with their length in milliseconds. */
export const TIME_UNIT_MS = { second: 1000, minute: 60_000, hour: 3_600_000 } as const
export type TimeUnit = keyof typeof TIME_UNIT_MS

/** The price models. A new one is a new member here, its rules in model files (specs/pricing.md). */
export const PRICE_MODELS = ['per-time', 'per-result', 'fixed'] as const
export type PriceModel = (typeof PRICE_MODELS)[number]

/**
 * Paid for the time used: `rate` per `unit` of billed wall time (rounded up to a whole
 * micro-token), at least `minimum` for a completed run; the escrow is the rate over the whole
 * duration, at least `minimum`.
 */
export interface PerTimePrice {
  model: 'per-time'
  unit: TimeUnit
  currency: Currency
  /** Micro-tokens per `unit`, for the resources bid for. */
  rate: Amount
  /** A completed run pays at least this, and the escrow is never below it. */
  minimum: Amount
}

/**
 * A fixed price paid on a verified result: the escrow is `amount`; a completed run whose result
 * counts (verified, a rejection overruled, or claimed when the requester stayed silent) pays all
 * of it; anything else pays nothing.
 */
export interface PerResultPrice {
  model: 'per-result'
  currency: Currency
  amount: Amount
}

/**
 * A fixed price for the run within its time (the bid's TimeBid: a duration or a window): the
 * escrow is `amount`; a run that ends on its own (completed, failed with an exit code, timed out)
 * pays all of it, whatever its result; a requester's cancel pays the share of the time it held;
 * a run that never started, a provider fault and an upheld rejection pay nothing.
 */
export interface FixedPrice {
  model: 'fixed'
  currency: Currency
  amount: Amount
}

/** A bid's price terms, signed by the provider inside its bid. */
export type PriceTerms = PerTimePrice | PerResultPrice | FixedPrice

/**
 * The time a price is for: a duration (seconds, from whenever the run starts) or a fixed window
 * (ms epoch, start..finish).
 */
export type TimeBid = { durationSeconds: number } | { start: number; finish: number }

/** The length of `t` in whole milliseconds (0 for a window that ends before it starts). */
export function durationMs(t: TimeBid): number {
  return 'durationSeconds' in t ? t.durationSeconds * 1000 : Math.max(0, t.finish - t.start)
}

/** Today's price: `rate` micro-tokens per hour, at least `minimum` for a completed run. */
export function perHour(rate: Amount, minimum: Amount): PerTimePrice {
  return { model: 'per-time', unit: 'hour', currency: CURRENCY, rate, minimum }
}

/** A fixed `amount` paid on a verified result. */
export function perResult(amount: Amount): PerResultPrice {
  return { model: 'per-result', currency: CURRENCY, amount }
}

/** A fixed `amount` for the run within its time. */
export function fixedPrice(amount: Amount): FixedPrice {
  return { model: 'fixed', currency: CURRENCY, amount }
}

/**
 * The price terms of a stored or received bid: its `price`, or for a bid of dms 0.1
 * (which carried `pricePerHour` and `minJobPrice`) those as per-hour terms. Undefined when it has
 * neither. The record itself is not rewritten, so its signature still checks.
 */
export function priceOf(bid: {
  price?: PriceTerms
  pricePerHour?: number
  minJobPrice?: number
}): PriceTerms | undefined {
  if (bid.price !== undefined) return bid.price
  if (bid.pricePerHour === undefined) return undefined
  return perHour(bid.pricePerHour, bid.minJobPrice ?? 0)
}
