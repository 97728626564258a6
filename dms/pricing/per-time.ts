/** The per-time model (today's per-hour): specs/pricing.md ("Per time"). */
import { ceilDiv, InvalidAmountError, isAmount, toAmount, type Amount } from './amount.js'
import type { PriceModelRules } from './model.js'
import { durationMs, isPrice, MAX_PRICE, TIME_UNIT_MS, type PerTimePrice } from './terms.js'

/** What `ms` milliseconds cost at `p.rate` per `p.unit`, rounded up to a whole micro-token. */
export function costOfTime(ms: number, p: Pick<PerTimePrice, 'rate' | 'unit'>): Amount {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new InvalidAmountError('billed milliseconds', ms)
  if (!isAmount(p.rate)) throw new InvalidAmountError(`price per ${p.unit}`, p.rate)
  return toAmount(ceilDiv(BigInt(ms) * BigInt(p.rate), BigInt(TIME_UNIT_MS[p.unit])), 'cost')
}

export const perTimeRules: PriceModelRules<PerTimePrice> = {
  problem(p) {
    if (!Object.hasOwn(TIME_UNIT_MS, p.unit)) return `unknown time unit ${String(p.unit)}`
    if (!isPrice(p.rate))
      return `price per ${p.unit} must be a whole number of micro-tokens up to ${MAX_PRICE}, got ${String(p.rate)}`
    if (!isPrice(p.minimum))
      return `minimum job price must be a whole number of micro-tokens up to ${MAX_PRICE}, got ${String(p.minimum)}`
    return undefined
  },
  escrow(p, time) {
    const ms = durationMs(time)
    if (!Number.isSafeInteger(ms) || ms < 0) throw new InvalidAmountError('duration (ms)', ms)
    if (!isAmount(p.minimum)) throw new InvalidAmountError('minimum job price', p.minimum)
    return Math.max(p.minimum, costOfTime(ms, p))
  },
  bill(p, e) {
    // A run that never started (failed with exit code < 0) pays nothing.
    if (e.kind === 'result' && e.status === 'failed' && e.exitCode < 0) return 0
    const usage = costOfTime(e.ms, p)
    const floor = e.kind === 'result' && e.status === 'completed' ? p.minimum : 0
    return Math.max(floor, usage)
  },
  describe: (p) => `${p.rate}/${p.unit}`,
}
