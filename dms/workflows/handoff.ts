/**
 * Hand-offs (specs/workflow.md, "Hand-offs"): a task's `from` inputs become inputs of its job that
 * its provider fetches straight from the upstream task's provider. The upstream's archive stays
 * there; the requester checked its manifest against the hash the upstream provider signed in its
 * receipt (the verify step), and names each file by the hash that manifest lists. When the task is
 * invoked, the requester signs its provider a delegation of its own grant on the archive; the
 * downstream provider fetches the archive (checked against its id) and each file must hash to the
 * id named here.
 */
import { DmsError } from '../../actors/errors.js'
import type { JobRecord } from '../orchestrator/job-record.js'
import type { InputSpec } from '../orchestrator/job-spec.js'
import type { FromTask, Workflow } from './document.js'
import { unitsByJob } from './pod-job.js'
import { FINAL_WORKFLOW_STATES, type WorkflowRecord, type WorkflowState } from './record.js'

export class HandoffError extends DmsError {
  constructor(message: string) {
    super('HANDOFF_FAILED', message)
  }
}

/** What a hand-off reads of its upstream's job. */
export type UpstreamJob = Pick<JobRecord, 'result' | 'winner' | 'providerAddrs'>

/**
 * The inputs `from` takes from its completed upstream: one file at `as`, or every file of the
 * archive under `as/`. An upstream that ran in a pod (`member`: its task name) wrote its outputs
 * under `<member>/` of its pod's one archive: only that subtree is its, and paths are read in it.
 * Throws HandoffError naming what is missing.
 */
export function handOff(from: FromTask, up: UpstreamJob | undefined, member?: string): InputSpec[] {
  const prefix = member === undefined ? '' : `${member}/`
  const manifest = (up?.result?.outputs ?? [])
    .filter((m) => m.path.startsWith(prefix))
    .map((m) => ({ ...m, own: m.path.slice(prefix.length) }))
  const wanted = from.path === undefined ? manifest : manifest.filter((m) => m.own === from.path)
  if (from.path !== undefined && wanted.length === 0)
    throw new HandoffError(`${from.fromTask} did not write ${from.path}`)
  if (wanted.length === 0) return []
  const archive = up?.result?.archive
  const provider = up?.winner?.provider
  if (archive === undefined || provider === undefined)
    throw new HandoffError(`${from.fromTask} left no output archive at a provider`)
  const addrs = up?.providerAddrs?.[provider] ?? []
  return wanted.map((m) => ({
    path: from.path !== undefined ? from.as : `${from.as}/${m.own}`,
    sha256: m.sha256,
    size: m.size,
    source: { peer: provider, addrs, archive: archive.sha256, archiveSize: archive.size, entry: m.path },
  }))
}

/**
 * Whether a task downstream takes the outputs of `tasks` (one task, or a pod's): their job then
 * keeps its archive at its provider (`outputsStay`), where the dependants fetch it.
 */
export function handedOn(workflow: Pick<Workflow, 'tasks'>, tasks: readonly string[]): boolean {
  return workflow.tasks.some((d) => d.from.some((f) => tasks.includes(f.fromTask)))
}

/**
 * Whether job `jobId` of a workflow kept its archive at its provider for the tasks downstream and
 * the workflow has ended without `keepOutputs`, so that archive was released (or is being):
 * specs/workflow.md, "Archives released".
 */
export function releasedAtEnd(wf: { state: WorkflowState; record: WorkflowRecord }, jobId: string): boolean {
  if (!FINAL_WORKFLOW_STATES.includes(wf.state) || wf.record.workflow.keepOutputs === true) return false
  return handedOn(wf.record.workflow, unitsByJob(wf.record).get(jobId) ?? [])
}
