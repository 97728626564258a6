/**
 * A pod job's `members` (specs/job-spec.md, "Pods"): 2..8 containers that run together on one
 * provider, under one contract. Declared once (TypeBox) for `jobSpecSchema`; `parseMembers` checks
 * what the schema cannot, with the executor's own rules (dms/workload/run-rules.ts), each refusal
 * naming the field (`members.1.image`).
 */
import { Type, type Static } from '@sinclair/typebox'
import { runFieldsProblem, type RunFieldProblem } from '../workload/check.js'
import { imageRefProblem } from '../workload/image-ref.js'
import {
  cpuSchema,
  imageRefSchema,
  postedRunFields,
  postedRunOf,
  postingOf,
  type FlatMember,
} from '../workload/workload.js'
import {
  MAX_CPU,
  MAX_POD_MEMBERS,
  MIN_MEMORY_BYTES,
  MIN_POD_MEMBERS,
  POD_MEMBER_NAME_PATTERN,
} from '../workload/run-rules.js'
import { strictObject as obj } from '../schema.js'

/** A size: a byte count, or a number with a unit ("256MiB"). */
const size = Type.Union([Type.Integer({ minimum: 0 }), Type.String({ minLength: 1, maxLength: 32 })])

/**
 * One member as posted: its own container (its image, the workload member's run fields, its
 * network flag), and its share of the pod's cpu and memory.
 */
export const podMemberSchema = obj({
  name: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: POD_MEMBER_NAME_PATTERN,
    description: "a workflow task's name; its outputs come back under `<name>/`",
  }),
  image: imageRefSchema,
  ...postedRunFields,
  network: Type.Optional(
    Type.Boolean({ description: 'this member may use the network (default false: only lo)' }),
  ),
  cpu: cpuSchema,
  memory: size,
})

export const podMembersSchema = Type.Array(podMemberSchema, {
  minItems: MIN_POD_MEMBERS,
  maxItems: MAX_POD_MEMBERS,
  description:
    'a pod: 2-8 containers run together on one provider under one contract, sharing /pod; instead of image, command, env, workdir and network (specs/job-spec.md, "Pods")',
})

export type PodMemberInput = Static<typeof podMemberSchema>

/**
 * A validated member, sizes in bytes: the flat container fields the workload is written from
 * (`memberOf`). `network`: this member may use the network (only providers with
 * `provider.allowNetwork` bid).
 */
export type PodMemberSpec = FlatMember

/** Why a field is refused: its path and the problem (an InvalidJobSpecError to be). */
export interface FieldProblem {
  field: string
  problem: string
}

/** A run field's problem as a job spec names it (`command.1`, `env.A=B`), under `at`. */
export const runProblemAt = (p: RunFieldProblem, at = ''): FieldProblem => ({
  field: `${at}${p.field}${p.item === undefined ? '' : `.${p.item}`}`,
  problem: p.problem,
})

/**
 * Checks members past their schema (images, commands, env, memory, unique names, totals) and
 * returns them with sizes in bytes, or the first problem. `bytes` reads a size (throws on a bad one).
 */
export function parseMembers(
  members: readonly PodMemberInput[],
  bytes: (field: string, v: number | string) => number,
): PodMemberSpec[] | FieldProblem {
  const seen = new Set<string>()
  const out: PodMemberSpec[] = []
  for (const [i, m] of members.entries()) {
    const at = (field: string) => `members.${i}.${field}`
    if (seen.has(m.name)) return { field: at('name'), problem: `repeats "${m.name}"` }
    seen.add(m.name)
    const image = imageRefProblem(m.image)
    if (image !== undefined) return { field: at('image'), problem: image }
    const run = runFieldsProblem(m)
    if (run !== undefined) return runProblemAt(run, at(''))
    const memoryBytes = bytes(at('memory'), m.memory)
    if (memoryBytes < MIN_MEMORY_BYTES) return { field: at('memory'), problem: 'must be at least 6MiB' }
    out.push({
      name: m.name,
      image: m.image,
      ...postedRunOf(m),
      ...(m.network === true ? { network: true } : {}),
      cpu: m.cpu,
      memoryBytes,
    })
  }
  const { cpu, memoryBytes } = podTotals(out)
  if (cpu > MAX_CPU) return { field: 'members', problem: `cpu adds up to ${cpu}, more than ${MAX_CPU}` }
  if (!Number.isSafeInteger(memoryBytes)) return { field: 'members', problem: 'memory adds up to too much' }
  return out
}

/** A pod's resources: the members' cpu and memory added up. */
export function podTotals(members: ReadonlyArray<{ cpu: number; memoryBytes: number }>): {
  cpu: number
  memoryBytes: number
} {
  // Added in order from 0, exactly as the executor checks the sum (dms/executor/docker/pod-config.ts).
  const cpu = members.reduce((n, m) => n + m.cpu, 0)
  return { cpu, memoryBytes: members.reduce((n, m) => n + m.memoryBytes, 0) }
}

/** A member as posted (the inverse of `parseMembers`). */
export function postedMember(m: PodMemberSpec): PodMemberInput {
  return {
    name: m.name,
    image: m.image,
    ...postingOf(m),
    ...(m.network === true ? { network: true } : {}),
    cpu: m.cpu,
    memory: m.memoryBytes,
  }
}
