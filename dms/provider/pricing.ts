import { escrowFor } from '../contracts/money.js'
import type { Prices, Resources } from '../resources/types.js'

const GiB = 1024 ** 3

/** Price per hour for these resources, an integer of the smallest unit (rounded up). */
export function pricePerHour(r: Resources, p: Prices): number {
  return Math.ceil(
    r.cpu * p.perCpuHour +
      (r.memoryBytes / GiB) * p.perGiBMemoryHour +
      (r.diskBytes / GiB) * p.perGiBDiskHour +
      r.gpus * p.perGpuHour,
  )
}

/**
 * The bid's total for the whole max duration: at least the provider's minimum job price. Computed
 * exactly as the contract-db checks it (`escrowFor`, integer arithmetic).
 */
export function totalFor(perHour: number, durationSeconds: number, p: Prices): number {
  return escrowFor(perHour, durationSeconds, p.minJobPrice)
}
