/**
 * A workflow's units as jobs (specs/workflow.md, "Pods"): a task alone is one job; the tasks of a
 * pod are ONE job whose `members` are the tasks (each its own container, named after the task),
 * its resources their sums, its price their prices added up. Each task's row reads its part of
 * that job: the outputs under `<task>/` of the pod's archive.
 */
import type { JobError } from '../orchestrator/job-record.js'
import type { JobResult } from '../protocol/messages.js'
import type { InputSpec, JobSpec } from '../orchestrator/job-spec.js'
import { podTotals } from '../orchestrator/job-spec-members.js'
import { withoutRun } from '../orchestrator/job-spec-run.js'
import { sum } from '../contracts/money.js'
import type { WorkflowTask } from './document.js'
import { memberOf, podInputs } from './pods.js'
import type { WorkflowRecord } from './record.js'

/** Each job of a workflow (started or ended) and its tasks, in document order. */
export function unitsByJob(rec: WorkflowRecord): Map<string, string[]> {
  const units = new Map<string, string[]>()
  for (const t of rec.workflow.tasks) {
    const jobId = rec.tasks[t.name]?.jobId
    if (jobId !== undefined) units.set(jobId, [...(units.get(jobId) ?? []), t.name])
  }
  return units
}

/**
 * The one job of pod `pod`: a member per task (in document order, named after it, with its image,
 * run fields, network, cpu and memory), every task's inputs under the one /inputs, the disks
 * added up, and the prices added up (each task's maxPrice is what it may cost: the pod's contract
 * may cost their sum). The job-level fields are the same in every task (checkPods), so the first
 * task's are the pod's.
 */
export function podJobSpec(
  pod: string,
  members: ReadonlyArray<{ task: WorkflowTask; inputs: InputSpec[] }>,
): JobSpec {
  const first = members[0].task.job
  const specs = members.map(({ task }) => memberOf(task))
  const inputs = podInputs(members.map((m) => m.inputs))
  const { network: _network, inputs: _inputs, ...jobLevel } = first
  return {
    // Each member has its own run fields (command, env, workdir, ...): the first task's are not the pod's.
    ...withoutRun(jobLevel),
    name: pod,
    image: specs[0].image,
    command: [],
    env: {},
    members: specs,
    resources: {
      ...podTotals(specs),
      diskBytes: members.reduce((n, m) => n + m.task.job.resources.diskBytes, 0),
      gpus: 0,
    },
    maxPrice: sum(members.map((m) => m.task.job.maxPrice)),
    ...(inputs.length > 0 ? { inputs } : {}),
  }
}

/**
 * A task's error from its job: a task alone, the job's; a pod's task whose job failed, the job's
 * code with how this task's own container ended first (the result's `members`), since one member
 * failing stops the others.
 */
export function taskError(
  job: { record: { error?: JobError; result?: Pick<JobResult, 'members'> } },
  task: string,
): JobError | undefined {
  const error = job.record.error
  const own = job.record.result?.members?.find((m) => m.name === task)
  if (error === undefined || own === undefined) return error
  const how = `${task}: ${own.status}, exit code ${own.exitCode}${own.reason !== undefined ? ` (${own.reason})` : ''}`
  return { ...error, message: `${how}; the pod's job: ${error.message}` }
}

/** A pod's task's files in its pod's outputs: those under `<task>/`. */
export function taskFiles<F extends { path: string }>(files: F[], task: string): F[] {
  return files.filter((f) => f.path.startsWith(`${task}/`))
}
