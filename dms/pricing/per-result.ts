/** The per-result model: a fixed price paid on a verified result. specs/pricing.md ("Per result"). */
import type { PriceModelRules } from './model.js'
import { isPrice, MAX_PRICE, type PerResultPrice } from './terms.js'

export const perResultRules: PriceModelRules<PerResultPrice> = {
  problem: (p) =>
    isPrice(p.amount)
      ? undefined
      : `price per result must be a whole number of micro-tokens up to ${MAX_PRICE}, got ${String(p.amount)}`,
  escrow: (p) => p.amount,
  // Only a completed run's result that counts (verified, overruled, or claimed) is paid: a failed
  // or timed-out run, a cancel and a provider fault deliver no result, so they pay nothing.
  bill: (p, e) => (e.kind === 'result' && e.status === 'completed' ? p.amount : 0),
  describe: (p) => `${p.amount} per result`,
}
