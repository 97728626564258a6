/**
 * Which of the offer's GPUs a new ledger entry holds, by index (`MachineInfo.gpus[].index`, the
 * index nvidia-smi and the engines use). The ledger counts GPUs like every resource; this file
 * names them, so the engine gets exactly the GPUs the ledger gave (specs/resources.md, "GPUs by
 * index").
 */
import type { LedgerEntry } from './ledger-entry.js'
import type { Offer } from './types.js'

/**
 * The GPU indices an offer holds: its `gpuIndices` (`dms onboard --gpu`), else the first
 * `resources.gpus` (an offer from the config, which names a count).
 */
export function offeredGpuIndices(offer: Pick<Offer, 'gpuIndices' | 'resources'> | undefined): number[] {
  if (offer === undefined) return []
  return offer.gpuIndices ?? Array.from({ length: offer.resources.gpus }, (_, i) => i)
}

/** The GPU indices the live entries hold, in any state and at any time of their slots. */
export function heldGpuIndices(live: readonly LedgerEntry[]): Set<number> {
  const held = new Set<number>()
  for (const e of live) for (const i of e.gpuIndices ?? []) held.add(i)
  return held
}

/** The offered indices among `eligible` (all offered when absent) that no live entry holds, ascending. */
export function freeGpuIndices(
  live: readonly LedgerEntry[],
  offered: readonly number[],
  eligible?: readonly number[],
): number[] {
  const held = heldGpuIndices(live)
  const fit = eligible === undefined ? undefined : new Set(eligible)
  return [...new Set(offered)]
    .filter((i) => !held.has(i) && (fit === undefined || fit.has(i)))
    .sort((a, b) => a - b)
}

/**
 * The `count` lowest offered indices among `eligible` (all offered when absent) that no live entry
 * holds, or undefined when fewer are free. Held means held by any live entry, whatever its slot:
 * a GPU is never promised twice, at the cost of a GPU job getting no later slot while its GPUs
 * are taken (it is declined instead).
 */
export function pickGpus(
  live: readonly LedgerEntry[],
  offered: readonly number[],
  count: number,
  eligible?: readonly number[],
): number[] | undefined {
  const free = freeGpuIndices(live, offered, eligible)
  return free.length < count ? undefined : free.slice(0, count)
}
