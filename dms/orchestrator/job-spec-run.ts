/**
 * What a job runs (specs/job-spec.md): one container (`image`, its run fields, `network`, its
 * `resources`) or a pod (`members`, the job's cpu and memory their sums, the first member's image
 * the contract's). The run fields (`command`, `env`, `workdir`, ...) are the workload member's
 * (`memberRunFields`, dms/workload/workload.ts), taken by their names there: none is listed here.
 * Checked with the executor's own rules (dms/workload/) before anything is contracted; a problem
 * names the field.
 */
import { runFieldsProblem } from '../workload/check.js'
import { artifactName, runtimePathProblem } from '../workload/artifact-name.js'
import { imageRefProblem } from '../workload/image-ref.js'
import { MIN_MEMORY_BYTES } from '../workload/run-rules.js'
import { postedRunOf, RUN_FIELDS, type GpuChoice, type MemberRun } from '../workload/workload.js'
import type { Resources } from '../resources/types.js'
import {
  parseMembers,
  podTotals,
  runProblemAt,
  type FieldProblem,
  type PodMemberInput,
  type PodMemberSpec,
} from './job-spec-members.js'

/** The part of a posted spec that says what runs (as `jobSpecSchema` checked it). */
export type RunInput = Partial<MemberRun> & {
  image?: string
  runtime?: string
  network?: boolean
  members?: PodMemberInput[]
  resources?: {
    cpu?: number
    memory?: number | string
    disk?: number | string
    gpu?: number
    gpuModel?: string
    gpuMemory?: number | string
  }
}

/**
 * What runs, sizes in bytes (`JobSpec`'s fields of the same names): the run fields (`command`,
 * `env`; `workdir`: where the command starts, absent for the image's own; ...), the artifact's
 * name, the network flag and the resources.
 */
export type RunSpec = MemberRun & {
  /**
   * The artifact's name (dms/workload/artifact-name.ts): an image reference, or `runtime:<path>`
   * for a job posted with `runtime`. Bids and contracts name it the same way.
   */
  image: string
  resources: Resources
  /** Which GPUs (`resources.gpus` of them): a model, a memory floor each; absent: any. */
  gpu?: GpuChoice
  network?: boolean
  members?: PodMemberSpec[]
}

/** Reads a size at a field (throws the caller's error for a bad one). */
export type Bytes = (field: string, v: number | string | undefined) => number

const required = (field: string): FieldProblem => ({ field, problem: 'is required' })

/** The artifact's name of one container: its image, or its runtime (`runtime:<path>`). */
function artifactNameOf(s: RunInput): string | FieldProblem {
  if (s.image !== undefined && s.runtime !== undefined)
    return { field: 'runtime', problem: 'must not be given with image: a job runs one or the other' }
  if (s.runtime !== undefined) {
    const problem = runtimePathProblem(s.runtime)
    if (problem !== undefined) return { field: 'runtime', problem }
    if (s.command !== undefined && s.command[0] !== s.runtime)
      return { field: 'command.0', problem: `must be the runtime's path ${s.runtime}` }
    return artifactName({ kind: 'runtime', path: s.runtime })
  }
  if (s.image === undefined) return { field: 'image', problem: 'is required (or runtime)' }
  const image = imageRefProblem(s.image)
  return image !== undefined ? { field: 'image', problem: image } : s.image
}

/** One container: its own image (or runtime), run fields, network and resources. */
export function parseContainerRun(s: RunInput, bytes: Bytes): RunSpec | FieldProblem {
  if (s.image === undefined && s.runtime === undefined) return artifactNameOf(s) as FieldProblem
  if (s.command === undefined) return required('command')
  if (s.resources === undefined) return required('resources')
  if (s.resources.cpu === undefined) return required('resources.cpu')
  if (s.resources.memory === undefined) return required('resources.memory')
  const image = artifactNameOf(s)
  if (typeof image !== 'string') return image
  const run = runFieldsProblem(s)
  if (run !== undefined) return runProblemAt(run)
  const memoryBytes = bytes('resources.memory', s.resources.memory)
  if (memoryBytes < MIN_MEMORY_BYTES) return { field: 'resources.memory', problem: 'must be at least 6MiB' }
  const { gpuModel, gpuMemory } = s.resources
  for (const [field, v] of [
    ['gpuModel', gpuModel],
    ['gpuMemory', gpuMemory],
  ] as const)
    if (v !== undefined && (s.resources.gpu ?? 0) === 0)
      return { field: `resources.${field}`, problem: 'needs resources.gpu: it says which GPUs' }
  const gpu: GpuChoice = {
    ...(gpuModel !== undefined ? { model: gpuModel } : {}),
    ...(gpuMemory !== undefined ? { minMemoryBytes: bytes('resources.gpuMemory', gpuMemory) } : {}),
  }
  return {
    image,
    ...postedRunOf({ ...s, command: s.command }),
    resources: {
      cpu: s.resources.cpu,
      memoryBytes,
      diskBytes: bytes('resources.disk', s.resources.disk),
      gpus: s.resources.gpu ?? 0,
    },
    ...(Object.keys(gpu).length > 0 ? { gpu } : {}),
    ...(s.network === true ? { network: true } : {}),
  }
}

/** A pod: its members, never a container of its own; its resources are the members' sums. */
export function parsePodRun(s: RunInput, bytes: Bytes): RunSpec | FieldProblem {
  for (const field of ['image', 'runtime', ...RUN_FIELDS, 'network'] as const) {
    if (s[field] !== undefined)
      return { field, problem: 'must not be given with members: each member has its own' }
  }
  for (const field of ['cpu', 'memory'] as const) {
    if (s.resources?.[field] !== undefined)
      return { field: `resources.${field}`, problem: 'must not be given with members: it is their sum' }
  }
  if ((s.resources?.gpu ?? 0) !== 0) return { field: 'resources.gpu', problem: 'must be 0 in a pod' }
  for (const field of ['gpuModel', 'gpuMemory'] as const)
    if (s.resources?.[field] !== undefined)
      return { field: `resources.${field}`, problem: 'must not be given in a pod: it has no GPUs' }
  const members = parseMembers(s.members ?? [], bytes)
  if (!Array.isArray(members)) return members
  return {
    image: members[0].image,
    command: [],
    env: {},
    members,
    resources: { ...podTotals(members), diskBytes: bytes('resources.disk', s.resources?.disk), gpus: 0 },
  }
}

/** A spec without its own run fields (a pod's job: each member has its own). */
export function withoutRun<S extends MemberRun>(s: S): Omit<S, keyof MemberRun> {
  const out: Record<string, unknown> = { ...s }
  for (const k of RUN_FIELDS) delete out[k]
  return out as Omit<S, keyof MemberRun>
}
