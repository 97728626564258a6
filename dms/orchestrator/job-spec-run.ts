/**
 * What a job runs (specs/job-spec.md): one container (`image`, `command`, `env`, `network`, its
 * `resources`) or a pod (`members`, the job's cpu and memory their sums, the first member's image
 * the contract's). Checked with the executor's own rules (dms/workload/run-rules.ts) before
 * anything is contracted; a problem names the field.
 */
import { imageRefProblem } from '../workload/image-ref.js'
import { commandProblem, envProblem, MIN_MEMORY_BYTES } from '../workload/run-rules.js'
import type { Resources } from '../resources/types.js'
import {
  parseMembers,
  podTotals,
  type FieldProblem,
  type PodMemberInput,
  type PodMemberSpec,
} from './job-spec-members.js'

/** The part of a posted spec that says what runs (as `jobSpecSchema` checked it). */
export interface RunInput {
  image?: string
  command?: string[]
  env?: Record<string, string>
  network?: boolean
  workdir?: string
  members?: PodMemberInput[]
  resources?: { cpu?: number; memory?: number | string; disk?: number | string; gpu?: number }
}

/** What runs, sizes in bytes (`JobSpec`'s fields of the same names). */
export interface RunSpec {
  image: string
  command: string[]
  env: Record<string, string>
  resources: Resources
  network?: boolean
  /** Where the command starts (an absolute path). Absent: the image's own. */
  workdir?: string
  members?: PodMemberSpec[]
}

/** Reads a size at a field (throws the caller's error for a bad one). */
export type Bytes = (field: string, v: number | string | undefined) => number

const required = (field: string): FieldProblem => ({ field, problem: 'is required' })

/** One container: its own image, command, env, network and resources. */
export function parseContainerRun(s: RunInput, bytes: Bytes): RunSpec | FieldProblem {
  if (s.image === undefined) return required('image')
  if (s.command === undefined) return required('command')
  if (s.resources === undefined) return required('resources')
  if (s.resources.cpu === undefined) return required('resources.cpu')
  if (s.resources.memory === undefined) return required('resources.memory')
  const image = imageRefProblem(s.image)
  if (image !== undefined) return { field: 'image', problem: image }
  const cmd = commandProblem(s.command)
  if (cmd !== undefined) return { field: `command.${cmd.index}`, problem: cmd.problem }
  const env = envProblem(s.env ?? {})
  if (env !== undefined) return { field: `env.${env.name}`, problem: env.problem }
  const memoryBytes = bytes('resources.memory', s.resources.memory)
  if (memoryBytes < MIN_MEMORY_BYTES) return { field: 'resources.memory', problem: 'must be at least 6MiB' }
  return {
    image: s.image,
    command: s.command,
    env: s.env ?? {},
    resources: {
      cpu: s.resources.cpu,
      memoryBytes,
      diskBytes: bytes('resources.disk', s.resources.disk),
      gpus: s.resources.gpu ?? 0,
    },
    ...(s.network === true ? { network: true } : {}),
    ...(s.workdir !== undefined ? { workdir: s.workdir } : {}),
  }
}

/** A pod: its members, never a container of its own; its resources are the members' sums. */
export function parsePodRun(s: RunInput, bytes: Bytes): RunSpec | FieldProblem {
  for (const field of ['image', 'command', 'env', 'network', 'workdir'] as const) {
    if (s[field] !== undefined)
      return { field, problem: 'must not be given with members: each member has its own' }
  }
  for (const field of ['cpu', 'memory'] as const) {
    if (s.resources?.[field] !== undefined)
      return { field: `resources.${field}`, problem: 'must not be given with members: it is their sum' }
  }
  if ((s.resources?.gpu ?? 0) !== 0) return { field: 'resources.gpu', problem: 'must be 0 in a pod' }
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
