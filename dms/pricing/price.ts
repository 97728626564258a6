/**
 * The three calls every party makes: `quote` (the provider prices a request), `escrowFor` (what a
 * contract locks; the requester checks it, the contract-db locks it) and `bill` (what closing pays).
 * Spec: specs/pricing.md.
 */
import { InvalidAmountError, isAmount, type Amount } from './amount.js'
import type { BillEvent, PriceModelRules } from './model.js'
import { fixedRules } from './fixed.js'
import { perResultRules } from './per-result.js'
import { perTimeRules } from './per-time.js'
import { CURRENCY, PRICE_MODELS, perHour, type PriceTerms, type TimeBid } from './terms.js'

/** Each model's rules: a new model is one entry here. */
const RULES: { [M in PriceTerms['model']]: PriceModelRules<Extract<PriceTerms, { model: M }>> } = {
  'per-time': perTimeRules,
  'per-result': perResultRules,
  fixed: fixedRules,
}

const rulesOf = (p: PriceTerms) => RULES[p.model] as PriceModelRules

/** A provider's hourly rates per resource (its onboarded `Prices`). */
export interface HourlyRates {
  perCpuHour: number
  perGiBMemoryHour: number
  perGiBDiskHour: number
  perGpuHour: number
  /** A completed per-hour run pays at least this. */
  minJobPrice: number
}

/** The resources a price is for. */
export interface Sized {
  cpu: number
  memoryBytes: number
  diskBytes: number
  gpus: number
}

/** What a provider charges before a request names its resources: hourly rates, or fixed terms. */
export type PriceOffer = HourlyRates | PriceTerms

const GiB = 1024 ** 3

/** Micro-tokens per hour for these resources at these rates (rounded up). */
export function hourlyRate(r: Sized, p: HourlyRates): Amount {
  return Math.ceil(
    r.cpu * p.perCpuHour +
      (r.memoryBytes / GiB) * p.perGiBMemoryHour +
      (r.diskBytes / GiB) * p.perGiBDiskHour +
      r.gpus * p.perGpuHour,
  )
}

/** The provider's price terms for a request of `resources` (what its bid signs). */
export function quote(offer: PriceOffer, resources: Sized): PriceTerms {
  if ('model' in offer) return offer
  return perHour(hourlyRate(resources, offer), offer.minJobPrice)
}

/** The escrow of a contract at `p` for `time`: the most it can pay. Throws InvalidAmountError. */
export function escrowFor(p: PriceTerms, time: TimeBid): Amount {
  return rulesOf(p).escrow(p, time)
}

/** What `e` pays at `p` for a contract for `time`, capped at `escrow`. */
export function bill(p: PriceTerms, e: BillEvent, escrow: Amount, time: TimeBid): Amount {
  return Math.min(escrow, rulesOf(p).bill(p, e, time))
}

/** For a person: "3600/hour", "500 per result", "500 fixed". */
export function describePrice(p: PriceTerms): string {
  return rulesOf(p).describe(p)
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

/**
 * Why `v`, received from a peer, is not price terms this node knows: an unknown model or
 * currency, a field of another model, a unit or amount out of range. Undefined when acceptable.
 */
export function priceProblem(v: unknown): string | undefined {
  if (!isObj(v)) return 'price terms must be an object'
  if (!(PRICE_MODELS as readonly unknown[]).includes(v.model)) return `unknown price model ${String(v.model)}`
  if (v.currency !== CURRENCY) return `unknown currency ${String(v.currency)}`
  const p = v as unknown as PriceTerms
  const fields = FIELDS[p.model]
  const extra = Object.keys(v).find((k) => !fields.includes(k))
  if (extra !== undefined) return `${p.model} price terms have no ${extra}`
  return rulesOf(p).problem(p)
}

const FIELDS: { [M in PriceTerms['model']]: string[] } = {
  'per-time': ['model', 'unit', 'currency', 'rate', 'minimum'],
  'per-result': ['model', 'currency', 'amount'],
  fixed: ['model', 'currency', 'amount'],
}

export { InvalidAmountError, isAmount, type Amount, type BillEvent }

/** The rate of per-hour terms (what dms 0.1 called `pricePerHour`); undefined for any other price. */
export function hourlyRateOf(p: PriceTerms | undefined): Amount | undefined {
  return p?.model === 'per-time' && p.unit === 'hour' ? p.rate : undefined
}

/** A price as listed (REST, CLI, dashboards): described for a person, and the per-hour rate when it is one. */
export function priceView(p: PriceTerms | undefined): { price: string; pricePerHour?: Amount } {
  const hourly = hourlyRateOf(p)
  return {
    price: p === undefined ? 'none' : describePrice(p),
    ...(hourly !== undefined ? { pricePerHour: hourly } : {}),
  }
}
