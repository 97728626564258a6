/** Arithmetic on `Resources`, dimension by dimension. Pure functions; inputs are never changed. */
import { ZERO, type Resources } from './types.js'

export type Dimension = keyof Resources

export const DIMENSIONS: readonly Dimension[] = ['cpu', 'memoryBytes', 'diskBytes', 'gpus']

/**
 * CPU is kept to micro-cores so that sums of fractions compare exactly: with plain floats
 * 0.1 + 0.2 > 0.3, and a ledger could refuse (or over-commit) by 4e-17 of a core.
 */
export function roundCpu(cores: number): number {
  return Math.round(cores * 1e6) / 1e6
}

function combine(a: Resources, b: Resources, f: (x: number, y: number) => number): Resources {
  return {
    cpu: roundCpu(f(a.cpu, b.cpu)),
    memoryBytes: f(a.memoryBytes, b.memoryBytes),
    diskBytes: f(a.diskBytes, b.diskBytes),
    gpus: f(a.gpus, b.gpus),
  }
}

export function add(a: Resources, b: Resources): Resources {
  return combine(a, b, (x, y) => x + y)
}

/** a - b; dimensions may go negative (see `floorZero`). */
export function sub(a: Resources, b: Resources): Resources {
  return combine(a, b, (x, y) => x - y)
}

export function sum(list: Iterable<Resources>): Resources {
  let total: Resources = { ...ZERO }
  for (const r of list) total = add(total, r)
  return total
}

/** Each dimension raised to at least 0. */
export function floorZero(r: Resources): Resources {
  return combine(r, ZERO, (x, y) => Math.max(x, y))
}

/** Whether `need` fits in `available` in every dimension. */
export function fits(need: Resources, available: Resources): boolean {
  const n = normalize(need)
  const a = normalize(available)
  return DIMENSIONS.every((d) => n[d] <= a[d])
}

/** How much is missing per dimension for `need` to fit in `available` (0 where it fits). */
export function shortfall(need: Resources, available: Resources): Resources {
  return floorZero(sub(need, available))
}

/** A plain copy with CPU rounded to micro-cores (drops any extra fields). */
export function normalize(r: Resources): Resources {
  return { cpu: roundCpu(r.cpu), memoryBytes: r.memoryBytes, diskBytes: r.diskBytes, gpus: r.gpus }
}

/**
 * Why `r` is not a valid amount, or undefined if it is: CPU must be a finite number >= 0, bytes and
 * GPUs whole numbers >= 0.
 */
export function resourcesProblem(r: unknown): string | undefined {
  if (typeof r !== 'object' || r === null) return 'not an object'
  const o = r as Record<string, unknown>
  for (const d of DIMENSIONS) {
    const v = o[d]
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      return `${d} must be a finite number, got ${JSON.stringify(v) ?? String(v)}`
    }
    if (v < 0) return `${d} must not be negative, got ${v}`
    if (d !== 'cpu' && !Number.isSafeInteger(v)) return `${d} must be a whole number, got ${v}`
  }
  return undefined
}
