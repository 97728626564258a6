import type { EngineCapabilities } from '../workload/capabilities.js'

/** Amounts of compute, in exact units. */
export interface Resources {
  /** CPU cores; fractions allowed (0.5 = half a core). */
  cpu: number
  memoryBytes: number
  diskBytes: number
  /** Number of GPUs. */
  gpus: number
}

export const ZERO: Resources = Object.freeze({ cpu: 0, memoryBytes: 0, diskBytes: 0, gpus: 0 })

/** What the machine has, as measured. */
export interface MachineInfo {
  cpu: { cores: number; model: string; arch: string; speedGHz: number }
  memoryBytes: number
  disk: { path: string; totalBytes: number; freeBytes: number }
  /**
   * By `index`: nvidia-smi's where it is found (what pinning and CUDA_VISIBLE_DEVICES use), else
   * systeminformation's list order. `uuid` only from nvidia-smi.
   */
  gpus: Array<{ index: number; vendor: string; model: string; memoryBytes: number; uuid?: string }>
  os: { platform: string; distro: string; release: string; kernel: string }
  /**
   * The engines this provider offers (`provider.engines`), each as it answered when measured. `why`
   * stays on this machine: it is shown to its operator, never sent to a peer.
   */
  engines: EngineCapabilities[]
  measuredAt: number
}

/**
 * Prices in the smallest currency unit ("micro-tokens", integers) per unit-hour.
 * A job's price per hour = cpu*perCpuHour + GiB memory*perGiBMemoryHour + GiB disk*perGiBDiskHour + gpus*perGpuHour.
 */
export interface Prices {
  perCpuHour: number
  perGiBMemoryHour: number
  perGiBDiskHour: number
  perGpuHour: number
  /** A bid's total is never below this. */
  minJobPrice: number
}

/** A provider's onboarded share of the machine and its prices. */
export interface Offer {
  resources: Resources
  prices: Prices
  /** When this machine was first onboarded (ms epoch); kept when the offer changes. */
  onboardedAt: number
  /** When the offer last changed (ms epoch). */
  updatedAt?: number
  /** Which of the machine's GPUs (by `MachineInfo.gpus[].index`) are offered; `resources.gpus` is their count. */
  gpuIndices?: number[]
  /**
   * Set by `dms offboard`: no new reservations (the provider declines with "offboarded"), while
   * what is reserved, locked or allocated runs to its end. Cleared by onboarding again.
   */
  withdrawnAt?: number
}
