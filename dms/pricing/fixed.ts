/**
 * The fixed model: one amount for the run within its time (its TimeBid), whatever the run's exit.
 * specs/pricing.md ("Fixed").
 */
import { ceilDiv, toAmount } from './amount.js'
import type { PriceModelRules } from './model.js'
import { durationMs, isPrice, MAX_PRICE, type FixedPrice } from './terms.js'

export const fixedRules: PriceModelRules<FixedPrice> = {
  problem: (p) =>
    isPrice(p.amount)
      ? undefined
      : `fixed price must be a whole number of micro-tokens up to ${MAX_PRICE}, got ${String(p.amount)}`,
  escrow: (p) => p.amount,
  bill(p, e, time) {
    // The requester buys the provider's time, not a result: a run that ended on its own (completed,
    // failed with an exit code, timed out) used what was bought and pays it all. One that never
    // started (exit code < 0) was not given the time, and pays nothing.
    if (e.kind === 'result' && e.status === 'failed' && e.exitCode < 0) return 0
    if (e.kind === 'result' && e.status !== 'cancelled') return p.amount
    // A cancel gives the rest of the time back: it pays the share of the time it held.
    const of = durationMs(time)
    if (of <= 0) return 0
    return toAmount(ceilDiv(BigInt(p.amount) * BigInt(Math.min(e.ms, of)), BigInt(of)), 'fixed share')
  },
  describe: (p) => `${p.amount} fixed`,
}
