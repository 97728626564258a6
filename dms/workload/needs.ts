/**
 * What a provider judges before it bids: the workload's needs, a projection of the workload
 * (workload.ts) that every member keeps whole except what it runs with. The bid request carries
 * them (specs/protocol.md, "Bid request: the workload's needs").
 *
 * Not the whole workload: the bid request is gossiped to every provider (or sent to a sample)
 * before any contract, and a member's command, env and working directory often hold secrets (API
 * keys, tokens). Those reach only the provider that won, in the invocation. The needs are the
 * member schema without its run fields (`memberRunFields`: command, env, workdir), so a new run
 * field stays with the winner and any other new member field joins the needs, each without a
 * second declaration.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { WorkloadProblem } from './check.js'
import { MAX_POD_MEMBERS } from './run-rules.js'
import {
  RUN_FIELDS,
  workloadMemberSchema,
  workloadTotals,
  type MemberRun,
  type Workload,
  type WorkloadMember,
} from './workload.js'

/**
 * One member as a bidder sees it: its name, artifact, network policy and share of the resources;
 * not its run fields, which only the provider that won receives (in the invocation).
 */
export const memberNeedsSchema = Type.Omit(workloadMemberSchema, RUN_FIELDS as Array<keyof MemberRun>)

/**
 * The workload's needs: its members (1 for a plain job, 2..8 for a pod) without what they run
 * with, and a pod's shared disk (its /outputs and /pod), which no member has on its own: the pod's
 * disk lives in the contract's resources, not in the workload, so without it here a provider would
 * bid a pod no disk and the requester would refuse the bid. Absent for a plain job (its member's
 * resources carry its disk) and for a pod that asks none.
 */
export const workloadNeedsSchema = Type.Object(
  {
    members: Type.Array(memberNeedsSchema, { minItems: 1, maxItems: MAX_POD_MEMBERS }),
    podDiskBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  },
  { additionalProperties: false },
)

export type MemberNeeds = Static<typeof memberNeedsSchema>
export type WorkloadNeeds = Static<typeof workloadNeedsSchema>

/**
 * The needs of a workload: each member without its run fields (command, env, working directory),
 * and for a pod its shared disk (`podDiskBytes`, left out when 0).
 */
export function needsOf(w: Workload, podDiskBytes = 0): WorkloadNeeds {
  const members = w.members.map(memberNeeds)
  return members.length > 1 && podDiskBytes > 0 ? { members, podDiskBytes } : { members }
}

/** What the needs ask in all: the members' resources added up, with a pod's shared disk. */
export function needsTotals(n: WorkloadNeeds): ReturnType<typeof workloadTotals> {
  const t = workloadTotals(n)
  return { ...t, diskBytes: t.diskBytes + (n.podDiskBytes ?? 0) }
}

function memberNeeds(m: WorkloadMember): MemberNeeds {
  const needs: Partial<WorkloadMember> = { ...m }
  for (const f of RUN_FIELDS) delete needs[f]
  return needs as MemberNeeds
}

/**
 * Why `n` is not a workload's needs, or undefined: its schema (bounds on every field), unique
 * member names, and members' resources whose sums stay whole, exact numbers (a hostile request
 * must not make a provider add up to Infinity or past 2^53).
 */
export function needsProblem(n: unknown): WorkloadProblem | undefined {
  const first = Value.Errors(workloadNeedsSchema, n).First()
  if (first !== undefined) {
    const field = first.path.replace(/^\//, '').replaceAll('/', '.') || 'needs'
    return { field, problem: first.message }
  }
  const needs = n as WorkloadNeeds
  const seen = new Set<string>()
  for (const [i, m] of needs.members.entries()) {
    if (seen.has(m.name)) return { field: `members.${i}.name`, problem: `repeats ${JSON.stringify(m.name)}` }
    seen.add(m.name)
    const min = m.resources.gpus?.minMemoryBytes
    if (min !== undefined && !Number.isSafeInteger(min))
      return {
        field: `members.${i}.resources.gpus.minMemoryBytes`,
        problem: 'is not a whole number below 2^53',
      }
  }
  if (needs.podDiskBytes !== undefined && needs.members.length < 2)
    return { field: 'podDiskBytes', problem: "is a pod's: a plain job's disk is its member's" }
  const t = needsTotals(needs)
  if (!Number.isSafeInteger(t.memoryBytes))
    return { field: 'members', problem: 'memoryBytes add up past 2^53' }
  if (!Number.isSafeInteger(t.diskBytes)) return { field: 'members', problem: 'diskBytes add up past 2^53' }
  return undefined
}

/** The image a provider's terms name for the needs: the first member's (a pod's, as a plain job's). */
export const imageOfNeeds = (n: WorkloadNeeds): string | undefined => {
  const a = n.members[0].artifact
  return a.kind === 'image' ? a.ref : undefined
}

/** Every image the needs name, each once, the first member's first. */
export const imagesOfNeeds = (n: WorkloadNeeds): string[] => [
  ...new Set(n.members.flatMap((m) => (m.artifact.kind === 'image' ? [m.artifact.ref] : []))),
]

/** Whether any member asks for the network. */
export const needsNetwork = (n: WorkloadNeeds): boolean => n.members.some((m) => m.network === 'outbound')
