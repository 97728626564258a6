/**
 * The GPUs a run gets: exactly the indices the provider's ledger holds for it
 * (`ExecutionSpec.gpuIndices`), as many as its member asks. Both engines pin these and no
 * others (specs/executor.md, "GPUs").
 */
import { InvalidSpecError } from '../errors.js'
import type { ExecutionSpec } from '../executor.js'
import type { WorkloadMember } from '../../workload/workload.js'

/** Most GPU indices a spec may name (a GPU index is nvidia-smi's: 0..MAX_GPU_INDEX). */
export const MAX_GPU_INDEX = 255

/**
 * The indices `member` runs with (empty without GPUs).
 * @throws InvalidSpecError when the member asks GPUs and the spec pins another number of them,
 *   an index is not a whole number in 0..255, or one repeats; or when GPUs are pinned for a
 *   member that asks none
 */
export function pinnedGpus(spec: Pick<ExecutionSpec, 'gpuIndices'>, member: WorkloadMember): number[] {
  const count = member.resources.gpus?.count ?? 0
  const pinned = spec.gpuIndices ?? []
  if (pinned.length !== count)
    throw new InvalidSpecError(
      'gpuIndices',
      count === 0
        ? 'name GPUs for a workload that asks none'
        : `must name the ${count} GPU${count === 1 ? '' : 's'} the workload asks (got ${pinned.length})`,
    )
  for (const i of pinned)
    if (!Number.isInteger(i) || i < 0 || i > MAX_GPU_INDEX)
      throw new InvalidSpecError('gpuIndices', `holds ${String(i)}, not a GPU index 0..${MAX_GPU_INDEX}`)
  if (new Set(pinned).size !== pinned.length) throw new InvalidSpecError('gpuIndices', 'repeats a GPU')
  return [...pinned]
}
