/** `dms workflow run|status|list|cancel|logs|outputs`: workflows over the REST API (specs/workflow.md). */
import { readFile } from 'node:fs/promises'
import { ApiClient, ApiClientError, RouteMissingError } from '../api/client.js'
import type { TaskRow, WorkflowRecord } from '../workflows/record.js'
import { CliError, isWide, print, printData, printNote, printSafe, terminalSafe } from './output.js'
import { printRows, printTable, type Column } from './table.js'
import { jobLogsCommand, jobOutputsCommand } from './job.js'
import { resolveWorkflowId } from './resolve-id.js'

export type WorkflowView = WorkflowRecord & { state: string }
/** The states a workflow ends in. */
export const FINAL_WORKFLOW = new Set(['completed', 'failed', 'cancelled'])

function apiProblem(err: unknown, prefix = ''): never {
  if (err instanceof ApiClientError) throw new CliError(`${prefix}${err.message}`)
  if (err instanceof RouteMissingError) throw new CliError(err.message)
  throw err
}

const get = (api: ApiClient, id: string) =>
  api
    .ok<WorkflowView>('GET', `/v1/workflows/${encodeURIComponent(id)}`)
    .catch((err: unknown) => apiProblem(err))

/**
 * One line per task: name, state, its job's state, job id, error; with a `pod` column when the
 * workflow has pods (a pod's tasks share its one job).
 */
export function taskTable(wf: WorkflowView): string[] {
  const tasks = wf.workflow.tasks
  const w = Math.max(4, ...tasks.map((t) => t.name.length))
  const pods = tasks.some((t) => t.pod !== undefined)
  const pw = Math.max(3, ...tasks.map((t) => t.pod?.length ?? 1))
  const pod = (p: string) => (pods ? `${p.padEnd(pw)}  ` : '')
  return [
    `${'task'.padEnd(w)}  ${pod('pod')}${'state'.padEnd(9)}  ${'job state'.padEnd(11)}  job`,
    ...tasks.map((t) => {
      const r: TaskRow = wf.tasks[t.name]
      const err = r.error !== undefined ? `  ${r.error.code}: ${r.error.message}` : ''
      return terminalSafe(
        `${t.name.padEnd(w)}  ${pod(t.pod ?? '-')}${r.state.padEnd(9)}  ${(r.jobState ?? '-').padEnd(11)}  ${r.jobId ?? '-'}${err}`,
      )
    }),
  ]
}

/** Follows a workflow until it ends, calling `onTask` with each task change seen. Polls the REST API. */
async function follow(
  api: ApiClient,
  id: string,
  onTask: (name: string, row: TaskRow) => void,
): Promise<WorkflowView> {
  const seen = new Map<string, string>()
  for (;;) {
    const wf = await get(api, id)
    for (const [name, row] of Object.entries(wf.tasks)) {
      const key = `${row.state}/${row.jobState ?? ''}`
      if (seen.get(name) !== key) {
        seen.set(name, key)
        onTask(name, row)
      }
    }
    if (FINAL_WORKFLOW.has(wf.state)) return wf
    await new Promise((r) => setTimeout(r, 200)) // display refresh
  }
}

export interface WorkflowRunOptions {
  socket: string
  file: string
  wait?: boolean
  follow?: boolean
  json?: boolean
}

export async function workflowRunCommand(opts: WorkflowRunOptions): Promise<void> {
  let doc: unknown
  try {
    doc = JSON.parse(await readFile(opts.file, 'utf8'))
  } catch (err) {
    throw new CliError(`cannot read workflow ${opts.file}: ${(err as Error).message}`)
  }
  const api = new ApiClient(opts.socket)
  const { id } = await api
    .ok<{ id: string }>('POST', '/v1/workflows', doc)
    .catch((err: unknown) => apiProblem(err, 'workflow refused: '))
  if (!opts.wait && !opts.follow) return opts.json ? printData({ id }) : print(id)
  const t0 = Date.now()
  if (!opts.json) print(`workflow ${id}`)
  const wf = await follow(api, id, (name, row) => {
    if (opts.follow && !opts.json)
      printSafe(
        `  ${String(Date.now() - t0).padStart(6)} ms  ${name}  ${row.state}${row.jobState ? ` (${row.jobState})` : ''}`,
      )
  })
  if (opts.json) printData(wf)
  else for (const line of taskTable(wf)) print(line)
  if (wf.state !== 'completed') throw new CliError(`workflow ${id} ${wf.state}`, 2)
}

export async function workflowStatusCommand(
  id: string,
  opts: { socket: string; json?: boolean },
): Promise<void> {
  id = await resolveWorkflowId(opts.socket, id)
  const wf = await get(new ApiClient(opts.socket), id)
  if (opts.json) return printData(wf)
  for (const line of workflowStatusLines(wf)) print(line)
}

/** What `workflow status` prints, terminal-safe: the workflow's line, then its task table. */
export function workflowStatusLines(wf: WorkflowView): string[] {
  return [
    terminalSafe(
      `${wf.id}  ${wf.state}${wf.workflow.name ? `  (${wf.workflow.name})` : ''}  escrow plan ${wf.escrowPlan}`,
    ),
    ...taskTable(wf),
  ]
}

/** `GET /v1/workflows/:id`, its errors as one-line CLI errors. */
export const readWorkflow = (socket: string, id: string): Promise<WorkflowView> =>
  get(new ApiClient(socket), id)

/** One row of `GET /v1/workflows`. */
export interface WorkflowRow {
  id: string
  name?: string
  state: string
  createdAt: number
  tasks: number
  completed: number
}

/** The columns of `workflow list`. */
export const WORKFLOW_COLUMNS: Array<Column<WorkflowRow>> = [
  { header: 'ID', cell: (w) => w.id },
  { header: 'STATE', cell: (w) => w.state },
  { header: 'COMPLETED', cell: (w) => `${w.completed}/${w.tasks}` },
  { header: 'CREATED', cell: (w) => new Date(w.createdAt).toISOString() },
  { header: 'NAME', cell: (w) => w.name ?? '' },
]

/** `GET /v1/workflows`, its errors as one-line CLI errors. */
export const readWorkflows = async (socket: string): Promise<WorkflowRow[]> =>
  (
    await new ApiClient(socket)
      .ok<{ workflows: WorkflowRow[] }>('GET', '/v1/workflows')
      .catch((err: unknown) => apiProblem(err))
  ).workflows

export async function workflowListCommand(opts: { socket: string; json?: boolean }): Promise<void> {
  const workflows = await readWorkflows(opts.socket)
  if (opts.json) return printData({ workflows })
  if (workflows.length === 0) return printNote('no workflows')
  printRows(WORKFLOW_COLUMNS, workflows)
}

export async function workflowCancelCommand(
  id: string,
  opts: { socket: string; json?: boolean },
): Promise<void> {
  id = await resolveWorkflowId(opts.socket, id)
  const r = await new ApiClient(opts.socket)
    .ok<{ id: string; state: string }>('DELETE', `/v1/workflows/${encodeURIComponent(id)}`)
    .catch((err: unknown) => apiProblem(err))
  if (opts.json) printData(r)
  else print(`${r.id} ${r.state}`)
}

/**
 * One task's logs: its job's, as `dms job logs` prints them; a pod's task, its own member's of the
 * pod's job (`--member`).
 */
export async function workflowLogsCommand(
  id: string,
  task: string,
  opts: { socket: string; json?: boolean; follow?: boolean },
): Promise<void> {
  id = await resolveWorkflowId(opts.socket, id)
  const wf = await get(new ApiClient(opts.socket), id)
  const t = wf.workflow.tasks.find((x) => x.name === task)
  if (t === undefined) throw new CliError(`workflow ${id} has no task ${task}`)
  const jobId = wf.tasks[task]?.jobId
  if (jobId === undefined) throw new CliError(`task ${task} is ${wf.tasks[task]?.state}: it has no job yet`)
  return jobLogsCommand(jobId, { ...opts, ...(t.pod !== undefined ? { member: task } : {}) })
}

/**
 * Fetches one task's outputs to the requester node (even those left at its provider for the tasks
 * downstream, checked against the provider's signed manifest), then lists them, or with --out
 * downloads each file from the node as `dms job outputs --out` does (each sha256 checked).
 */
export async function workflowOutputsCommand(
  id: string,
  task: string,
  opts: { socket: string; json?: boolean; out?: string; force?: boolean },
): Promise<void> {
  type Fetched = {
    task: string
    pod?: string
    jobId: string
    files: Array<{ path: string; sha256: string; size: number }>
  }
  id = await resolveWorkflowId(opts.socket, id)
  const r = await new ApiClient(opts.socket)
    .ok<Fetched>('POST', `/v1/workflows/${encodeURIComponent(id)}/tasks/${encodeURIComponent(task)}/outputs`)
    .catch((err: unknown) => apiProblem(err))
  // A pod's task: its files are under `<task>/` of the pod's archive, written without that prefix.
  if (opts.out !== undefined)
    return jobOutputsCommand(r.jobId, { ...opts, ...(r.pod !== undefined ? { subtree: r.task } : {}) })
  if (opts.json) return printData(r)
  printSafe(
    `task ${r.task}: job ${r.jobId}${r.pod !== undefined ? ` (pod ${r.pod}: its files under ${r.task}/)` : ''}, ${r.files.length} output files fetched to this node`,
  )
  printTable(
    ['SIZE', 'SHA256', 'PATH'],
    r.files.map((f) => [f.size, isWide() ? f.sha256 : `${f.sha256.slice(0, 16)}…`, f.path]),
  )
}
