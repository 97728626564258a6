/**
 * Pods in a workflow (specs/workflow.md, "Pods"): tasks with the same `pod` name run together as
 * ONE job on one provider (its spec's `members`, one per task), under one contract. Here: what the
 * document must satisfy for its pods (each refusal naming the field at fault), and the units the
 * machine and the runner schedule (a task alone, or a pod).
 */
import { runtimeOfName } from '../workload/artifact-name.js'
import type { InputSpec, JobSpec } from '../orchestrator/job-spec.js'
import { MAX_POD_MEMBERS, MIN_POD_MEMBERS } from '../workload/run-rules.js'
import { runFieldsOf } from '../workload/workload.js'
import { InvalidWorkflowError } from './errors.js'
import { findCycle } from './graph.js'
import { parseMembers, postedMember, type PodMemberSpec } from '../orchestrator/job-spec-members.js'

/** What the pod rules read of a parsed task. */
export interface PodTask {
  name: string
  job: JobSpec
  after: string[]
  from: Array<{ fromTask: string; path?: string; as: string }>
  pod?: string
}

/**
 * The fields of a job spec that belong to the one job a pod becomes, not to a member: every member
 * must give the same (as parsed, so a default equals its explicit value). Parsed key -> document field.
 */
const JOB_LEVEL: ReadonlyArray<[keyof JobSpec, string]> = [
  ['maxDurationSeconds', 'maxDuration'],
  ['retries', 'retries'],
  ['retryPolicy', 'retryPolicy'],
  ['providers', 'providers'],
  ['queueTimeoutSeconds', 'queueTimeout'],
  ['startAt', 'startAt'],
  ['startBy', 'startBy'],
  ['queue', 'queue'],
]

/** Each pod's tasks, in document order, by pod name (in order of first mention). */
export function podsOf(tasks: ReadonlyArray<{ name: string; pod?: string }>): Map<string, string[]> {
  const pods = new Map<string, string[]>()
  for (const t of tasks) if (t.pod !== undefined) pods.set(t.pod, [...(pods.get(t.pod) ?? []), t.name])
  return pods
}

/** The tasks that run as one unit with `task`: its pod's tasks, or itself alone. */
export function unitOf(tasks: ReadonlyArray<{ name: string; pod?: string }>, task: string): string[] {
  const pod = tasks.find((t) => t.name === task)?.pod
  return pod === undefined ? [task] : tasks.filter((t) => t.pod === pod).map((t) => t.name)
}

/**
 * Checks the document's pods; throws InvalidWorkflowError naming the field at fault. `tasks` are
 * parsed, in document order (indices are field paths), acyclic as tasks.
 */
export function checkPods(tasks: readonly PodTask[]): void {
  const at = new Map(tasks.map((t, i) => [t.name, i]))
  for (const [pod, names] of podsOf(tasks)) {
    const idx = names.map((n) => at.get(n) as number)
    if (names.length < MIN_POD_MEMBERS)
      throw new InvalidWorkflowError(
        `tasks.${idx[0]}.pod`,
        `pod ${pod} has one task: a pod is ${MIN_POD_MEMBERS} to ${MAX_POD_MEMBERS} tasks`,
      )
    if (names.length > MAX_POD_MEMBERS)
      throw new InvalidWorkflowError(
        `tasks.${idx[MAX_POD_MEMBERS]}.pod`,
        `pod ${pod} has ${names.length} tasks: a pod is at most ${MAX_POD_MEMBERS}`,
      )
    const first = tasks[idx[0]]
    // Where each path under the pod's one /inputs comes from (members share it).
    const landed = new Map<string, string>()
    for (const i of idx) {
      const t = tasks[i]
      const inPod = (n: string) => n !== t.name && names.includes(n)
      const fi = t.from.findIndex((f) => inPod(f.fromTask))
      if (fi >= 0)
        throw new InvalidWorkflowError(
          `tasks.${i}.from.${fi}.fromTask`,
          `${t.from[fi].fromTask} and ${t.name} are both in pod ${pod}: its outputs do not exist while they run together (share files through /pod)`,
        )
      // No fromTask is in the pod, so one in `after` came from runAfter, at its index there.
      const ra = t.after.findIndex(inPod)
      if (ra >= 0)
        throw new InvalidWorkflowError(
          `tasks.${i}.runAfter.${ra}`,
          `${t.after[ra]} and ${t.name} are both in pod ${pod}: they run together, not one after the other`,
        )
      if (t.job.resources.gpus > 0)
        throw new InvalidWorkflowError(`tasks.${i}.job.resources.gpu`, `a pod's members take no GPU`)
      if (runtimeOfName(t.job.image) !== undefined)
        throw new InvalidWorkflowError(
          `tasks.${i}.job.runtime`,
          `a pod's members are containers: a runtime runs alone on the process engine`,
        )
      for (const [key, field] of JOB_LEVEL)
        if (JSON.stringify(t.job[key]) !== JSON.stringify(first.job[key]))
          throw new InvalidWorkflowError(
            `tasks.${i}.job.${field}`,
            `the tasks of pod ${pod} run as one job: ${field} must be the same as ${first.name}'s`,
          )
      const land = (path: string, source: string, field: string) => {
        const was = landed.get(path)
        if (was !== undefined && was !== source)
          throw new InvalidWorkflowError(
            field,
            `${path}: the tasks of pod ${pod} share /inputs, and another task's input lands there`,
          )
        landed.set(path, source)
      }
      ;(t.job.inputs ?? []).forEach((f, j) =>
        land(f.path, `job ${JSON.stringify(f)}`, `tasks.${i}.job.inputs.${j}.path`),
      )
      t.from.forEach((f, j) => land(f.as, `from ${f.fromTask}\0${f.path ?? ''}`, `tasks.${i}.from.${j}.as`))
    }
    // The pod's job takes its members by the job spec's own rules (their sums bounded).
    const members = parseMembers(
      idx.map((i) => postedMember(memberOf(tasks[i]))),
      (_field, v) => Number(v),
    )
    if (!Array.isArray(members)) {
      const k = /^members\.(\d+)\./.exec(members.field)?.[1]
      throw new InvalidWorkflowError(
        k === undefined ? `tasks.${idx[0]}.pod` : `tasks.${idx[Number(k)]}.job`,
        `pod ${pod}: ${members.field}: ${members.problem}`,
      )
    }
  }
  // Pods run as one: a path out of a pod and back into it is a cycle no task order can break.
  const units = unitsGraph(tasks)
  const cycle = findCycle(units)
  if (cycle !== undefined) {
    const pod = cycle.find((u) => u.startsWith('pod '))?.slice(4) as string
    throw new InvalidWorkflowError(
      `tasks.${tasks.findIndex((t) => t.pod === pod)}.pod`,
      `pod ${pod} would wait for itself: ${cycle.join(' -> ')}`,
    )
  }
}

/**
 * A task as its pod's member: its container (its image, its run fields: `memberRunFields`,
 * dms/workload/workload.ts) and its share of the pod's cpu and memory.
 */
export function memberOf(t: Pick<PodTask, 'name' | 'job'>): PodMemberSpec {
  return {
    name: t.name,
    image: t.job.image,
    ...runFieldsOf(t.job),
    ...(t.job.network === true ? { network: true } : {}),
    cpu: t.job.resources.cpu,
    memoryBytes: t.job.resources.memoryBytes,
  }
}

/** The graph of units: a pod is one node (`pod <name>`), waiting for the union of its tasks' upstreams. */
function unitsGraph(tasks: readonly PodTask[]): Array<{ name: string; after: string[] }> {
  const unit = (n: string) => {
    const pod = tasks.find((t) => t.name === n)?.pod
    return pod === undefined ? n : `pod ${pod}`
  }
  const nodes = new Map<string, Set<string>>()
  for (const t of tasks) {
    const self = unit(t.name)
    const after = nodes.get(self) ?? new Set<string>()
    for (const u of t.after) if (unit(u) !== self) after.add(unit(u))
    nodes.set(self, after)
  }
  return [...nodes].map(([name, after]) => ({ name, after: [...after] }))
}

/** The pod's inputs: every member's, each path once (checkPods refused two different sources). */
export function podInputs(perMember: InputSpec[][]): InputSpec[] {
  const byPath = new Map<string, InputSpec>()
  for (const inputs of perMember) for (const f of inputs) if (!byPath.has(f.path)) byPath.set(f.path, f)
  return [...byPath.values()]
}
