/**
 * How much of a machine may be offered: what it has, minus a reserve kept for the host itself (the
 * OS, the dms daemon, Docker). Spec: specs/resources.md, "Host reserve".
 */
import { DIMENSIONS, floorZero, normalize, roundCpu, sub } from './math.js'
import type { MachineInfo, Prices, Resources } from './types.js'

const GiB = 1024 ** 3

/** The machine as amounts: cores, total memory, free space on the data dir's disk, GPU count. */
export function machineResources(m: MachineInfo): Resources {
  return { cpu: m.cpu.cores, memoryBytes: m.memoryBytes, diskBytes: m.disk.freeBytes, gpus: m.gpus.length }
}

/**
 * The default host reserve:
 * - CPU: max(0.5 core, 10% of the cores) — a 2-core machine keeps 0.5, a 16-core one 1.6;
 * - memory: max(1 GiB, 10% of total memory);
 * - disk: max(2 GiB, 5% of the data dir's filesystem size), taken from its free space;
 * - GPUs: none (a GPU is offered whole or not at all).
 * Each is capped at what the machine has. `override` replaces single dimensions.
 */
export function hostReserve(m: MachineInfo, override: Partial<Resources> = {}): Resources {
  const have = machineResources(m)
  const dflt: Resources = {
    cpu: roundCpu(Math.max(0.5, have.cpu * 0.1)),
    memoryBytes: Math.max(GiB, Math.ceil(have.memoryBytes * 0.1)),
    diskBytes: Math.max(2 * GiB, Math.ceil(m.disk.totalBytes * 0.05)),
    gpus: 0,
  }
  const r = normalize({ ...dflt, ...override })
  for (const d of DIMENSIONS) r[d] = Math.min(r[d], have[d])
  return r
}

/** The largest offer allowed: machine minus host reserve, never below zero. */
export function maxOffer(m: MachineInfo, reserve: Resources): Resources {
  return floorZero(sub(machineResources(m), reserve))
}

/**
 * Prices used when `dms onboard` is given none, in micro-tokens per unit-hour (see `Prices`).
 * A core-hour at 1000 makes a one-core, one-minute job cost about 17.
 */
export const DEFAULT_PRICES: Readonly<Prices> = Object.freeze({
  perCpuHour: 1000,
  perGiBMemoryHour: 100,
  perGiBDiskHour: 1,
  perGpuHour: 10_000,
  minJobPrice: 1,
})

/** Disk offered when `dms onboard` is given no `--disk` (capped at the most allowed). */
export const DEFAULT_DISK_BYTES = 10 * GiB
