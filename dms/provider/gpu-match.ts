/**
 * Which of the provider's offered GPUs fit a job's ask (`gpus: { count, model?, minMemoryBytes? }`
 * in the workload's needs): by model and memory, as measured (`MachineInfo.gpus`). Whether enough
 * of them are free is the ledger's to say when it reserves them by index (gpu-pick.ts).
 * Spec: specs/resources.md ("GPUs by index").
 */
import { formatBytes } from '../resources/units.js'
import type { MachineInfo } from '../resources/types.js'
import type { WorkloadNeeds } from '../workload/needs.js'
import type { GpuShare } from '../workload/workload.js'

/**
 * The GPUs a workload asks: every member's count added up, with the first model and memory floor
 * a member names (a pod's members have none: invoked-workload.ts); undefined without GPUs.
 */
export function gpuAskOf(needs: WorkloadNeeds): GpuShare | undefined {
  const shares = needs.members.flatMap((m) => (m.resources.gpus === undefined ? [] : [m.resources.gpus]))
  if (shares.length === 0) return undefined
  const model = shares.find((s) => s.model !== undefined)?.model
  const minMemoryBytes = shares.find((s) => s.minMemoryBytes !== undefined)?.minMemoryBytes
  return {
    count: shares.reduce((n, s) => n + s.count, 0),
    ...(model !== undefined ? { model } : {}),
    ...(minMemoryBytes !== undefined ? { minMemoryBytes } : {}),
  }
}

const words = (s: string): string[] =>
  s
    .toLowerCase()
    .split(/[\s_]+/)
    .filter(Boolean)

/**
 * Whether a GPU whose measured model is `model` is a `asked`: case and spacing aside, the asked
 * words appear in the model's, in a row (`H200` and `nvidia h200` are a `NVIDIA H200`; `H20` is not).
 */
export function modelMatches(asked: string, model: string): boolean {
  const a = words(asked)
  const m = words(model)
  if (a.length === 0) return false
  for (let i = 0; i + a.length <= m.length; i++) if (a.every((w, j) => m[i + j] === w)) return true
  return false
}

/** The ask in words, for a decline: `2 GPUs of model "H100" with at least 80 GiB each`. */
function askWords(ask: GpuShare): string {
  const n = `${ask.count} ${ask.count === 1 ? 'GPU' : 'GPUs'}`
  const model = ask.model !== undefined ? ` of model ${JSON.stringify(ask.model)}` : ''
  const mem = ask.minMemoryBytes !== undefined ? ` with at least ${formatBytes(ask.minMemoryBytes)} each` : ''
  return `${n}${model}${mem}`
}

/** The eligible GPUs (indices, ascending), or the decline when fewer are offered than asked. */
export type GpuMatch = { eligible: number[] } | { refusal: string }

/**
 * The offered GPUs (`offered`, indices of `machine`'s GPUs) that fit `ask`. Fewer than asked is a
 * refusal naming the ask and what is offered (models and memory: what a requester needs to ask
 * again); without a measurement only a count can be matched.
 */
export function matchGpus(
  ask: GpuShare,
  offered: readonly number[],
  machine: Pick<MachineInfo, 'gpus'> | undefined,
): GpuMatch {
  const filtered = ask.model !== undefined || ask.minMemoryBytes !== undefined
  if (filtered && machine === undefined)
    return { refusal: `gpu model: need ${askWords(ask)}; this provider has not measured its GPUs` }
  const gpus = offered.flatMap((i) => {
    const g = machine?.gpus.find((x) => x.index === i)
    return filtered && g === undefined
      ? []
      : [{ index: i, model: g?.model ?? '', memoryBytes: g?.memoryBytes ?? 0 }]
  })
  const eligible = gpus
    .filter((g) => ask.model === undefined || modelMatches(ask.model, g.model))
    .filter((g) => ask.minMemoryBytes === undefined || g.memoryBytes >= ask.minMemoryBytes)
    .map((g) => g.index)
    .sort((a, b) => a - b)
  if (eligible.length >= ask.count) return { eligible }
  // Grouped, so a host of 64 alike GPUs says it in a few words.
  const kinds = new Map<string, number>()
  for (const g of gpus) {
    const k = `${g.model || 'unknown model'} ${formatBytes(g.memoryBytes)}`
    kinds.set(k, (kinds.get(k) ?? 0) + 1)
  }
  const here = kinds.size === 0 ? 'none' : [...kinds].map(([k, n]) => `${n} × ${k}`).join(', ')
  return {
    refusal: filtered
      ? `gpu model: need ${askWords(ask)}; offered here: ${here}`
      : `not enough gpus: need ${ask.count}, offered ${gpus.length}`,
  }
}
