import { existsSync } from 'node:fs'
import { mkdir, rename, rm } from 'node:fs/promises'
import { dirname, isAbsolute, resolve as resolvePath, sep } from 'node:path'
import { ApiClient, ApiClientError, downloadTo, ndjson, RouteMissingError } from '../api/client.js'
import type { JobRecord } from '../orchestrator/job-record.js'
import { parseWholeNumber, UnitError } from '../resources/units.js'
import { resolveJobId } from './job-id.js'
import { queueFlag } from './resolve-id.js'
import { memberLines } from './member-lines.js'
import { CliError, isWide, print, printData, printNote, printSafe, writeOutput } from './output.js'
import { printRows, printTable, type Column } from './table.js'

export type JobView = JobRecord & { state: string }
/** The states a job ends in. */
export const FINAL = new Set(['completed', 'failed', 'cancelled'])

/** Follows a job until it ends, printing each state as it is entered. Polls the REST API. */
export async function follow(
  api: ApiClient,
  id: string,
  onState: (s: { state: string; at: number }) => void,
): Promise<JobView> {
  let shown = 0
  for (;;) {
    const job = await api.ok<JobView>('GET', `/v1/jobs/${id}`)
    for (; shown < job.history.length; shown++) onState(job.history[shown])
    if (FINAL.has(job.state)) return job
    await new Promise((r) => setTimeout(r, 150)) // display refresh; a streaming endpoint is planned
  }
}

/** API errors become one-line CLI errors; an older daemon (404 NOT_FOUND route) says so. */
export function apiProblem(err: unknown, prefix = ''): never {
  if (err instanceof ApiClientError) throw new CliError(`${prefix}${err.message}`)
  if (err instanceof RouteMissingError) throw new CliError(err.message)
  throw err
}

export const LOGS_FROM = new Set(['running', 'verifying', 'settling', 'completed', 'failed', 'cancelled'])

/**
 * Streams a job's logs (`GET /v1/jobs/:id/logs?follow=true`, NDJSON) to stdout/stderr until the
 * `end` line; resolves with the final state it gives, or undefined when the daemon has no such route.
 */
export async function streamLogs(
  socket: string,
  id: string,
  out: { stdout: (s: string, member?: string) => void; stderr: (s: string, member?: string) => void },
  member?: string,
): Promise<string | undefined> {
  type Line = { stream?: 'stdout' | 'stderr'; data?: string; end?: boolean; state?: string; member?: string }
  const only = member !== undefined ? `&member=${encodeURIComponent(member)}` : ''
  try {
    for await (const line of ndjson<Line>(
      socket,
      `/v1/jobs/${encodeURIComponent(id)}/logs?follow=true${only}`,
    )) {
      if (line.end === true) return line.state
      if (line.stream === 'stderr') out.stderr(line.data ?? '', line.member)
      else if (line.stream === 'stdout') out.stdout(line.data ?? '', line.member)
    }
  } catch (err) {
    if (err instanceof RouteMissingError) return undefined
    throw err
  }
  return undefined
}

/** Whether the provider cut a job's output (any stream, any pod member) at its cap. */
export function wasTruncated(job: Pick<JobView, 'result'>): boolean {
  const r = job.result as { truncated?: unknown; members?: Array<{ truncated?: unknown }> } | undefined
  return r?.truncated === true || (r?.members ?? []).some((m) => m.truncated === true)
}

/**
 * The line that says a job's output was cut, and how to get all of it: the provider keeps only
 * the start of each stream (at most LIMITS.log, 256 KiB, in a result), so the rest is in no log.
 */
export function truncatedNote(id: string): string {
  // A cut may fall mid-line: on a terminal, start the note on a line of its own.
  const nl = process.stdout.isTTY ? '\n' : ''
  return (
    `${nl}dms: output truncated: the provider keeps only the first 256 KiB of each stream, the rest is lost. ` +
    `Write large output to a file under /outputs and fetch it with: dms job outputs ${id} --out DIR`
  )
}

export interface JobListOptions {
  socket: string
  json?: boolean
  state?: string
  queue?: string
  since?: string
  limit?: string
  cursor?: string
}

/** One row of `GET /v1/jobs`. */
export interface JobRow {
  id: string
  name?: string
  state: string
  createdAt: number
  queue?: string
  rerunOf?: string
  provider?: string
}

/** The columns of `job list`. */
export const JOB_COLUMNS: Array<Column<JobRow>> = [
  { header: 'ID', cell: (j) => j.id },
  { header: 'STATE', cell: (j) => j.state },
  { header: 'CREATED', cell: (j) => new Date(j.createdAt).toISOString() },
  { header: 'QUEUE', cell: (j) => j.queue },
  { header: 'PROVIDER', cell: (j) => j.provider, wide: true },
  { header: 'RERUN OF', cell: (j) => j.rerunOf, wide: true },
  { header: 'NAME', cell: (j) => j.name ?? '' },
]

/** One page of jobs (`GET /v1/jobs` with its filters), as a table; says how to get the next. */
export async function jobListCommand(opts: JobListOptions): Promise<void> {
  const page = await readJobPage(opts.socket, await jobListQuery(opts))
  if (opts.json) return printData(page)
  if (page.jobs.length === 0) return printNote('no jobs')
  printRows(JOB_COLUMNS, page.jobs)
  if (page.next !== undefined) printNote(`more: add --cursor ${page.next}`)
}

/** `GET /v1/jobs?…`, its errors as one-line CLI errors. */
export const readJobPage = (socket: string, query: URLSearchParams) =>
  new ApiClient(socket)
    .ok<{ jobs: JobRow[]; next?: string }>('GET', `/v1/jobs?${query.toString()}`)
    .catch((err: unknown) => apiProblem(err))

/** `job list`'s filters as the query of `GET /v1/jobs`, checked (a queue by its tag or prefix). */
export async function jobListQuery(opts: JobListOptions): Promise<URLSearchParams> {
  const query = new URLSearchParams()
  if (opts.state !== undefined) query.set('state', opts.state)
  if (opts.queue !== undefined) query.set('queue', await queueFlag(opts.socket, opts.queue))
  if (opts.since !== undefined) {
    const t = Date.parse(opts.since)
    if (Number.isNaN(t)) throw new CliError(`--since: not a date or time: ${JSON.stringify(opts.since)}`)
    query.set('since', String(t))
  }
  try {
    query.set('limit', String(parseWholeNumber(opts.limit ?? '20', 'jobs')))
  } catch (err) {
    if (err instanceof UnitError) throw new CliError(`--limit: ${err.message}`)
    throw err
  }
  if (opts.cursor !== undefined) query.set('cursor', opts.cursor)
  return query
}

/** `dms job prune`: ended jobs by age or count (defaults: the node's `requester.retention`). */
export async function jobPruneCommand(opts: {
  socket: string
  json?: boolean
  maxAgeDays?: string
  keepLast?: string
}): Promise<void> {
  const num = (flag: string, v: string | undefined) => {
    if (v === undefined) return undefined
    try {
      return parseWholeNumber(v, flag === '--keep-last' ? 'jobs' : 'days')
    } catch (err) {
      if (err instanceof UnitError) throw new CliError(`${flag}: ${err.message}`)
      throw err
    }
  }
  const maxAgeDays = num('--max-age-days', opts.maxAgeDays)
  const keepLast = num('--keep-last', opts.keepLast)
  const r = await new ApiClient(opts.socket)
    .ok<{ pruned: number; blobsDeleted: number; grantsRevoked: number }>('POST', '/v1/jobs/prune', {
      ...(maxAgeDays !== undefined ? { maxAgeDays } : {}),
      ...(keepLast !== undefined ? { keepLast } : {}),
    })
    .catch((err: unknown) => apiProblem(err, 'prune refused: '))
  if (opts.json) return printData(r)
  print(`pruned ${r.pruned} ended jobs, ${r.blobsDeleted} blobs, ${r.grantsRevoked} grants`)
}

/** `dms job rerun <id>`: a new job from an ended job's spec. */
export async function jobRerunCommand(id: string, opts: { socket: string; json?: boolean }): Promise<void> {
  id = await resolveJobId(opts.socket, id)
  const res = await new ApiClient(opts.socket)
    .ok<{ id: string; state: string }>('POST', `/v1/jobs/${encodeURIComponent(id)}/rerun`)
    .catch((err: unknown) => apiProblem(err, 'rerun refused: '))
  if (opts.json) printData(res)
  else printSafe(`job ${res.id}: ${res.state} (rerun of ${id})`)
}

export async function jobLogsCommand(
  id: string,
  opts: { socket: string; json?: boolean; follow?: boolean; member?: string },
): Promise<void> {
  id = await resolveJobId(opts.socket, id)
  const member = opts.member
  const path = `/v1/jobs/${encodeURIComponent(id)}/logs${member !== undefined ? `?member=${encodeURIComponent(member)}` : ''}`
  if (opts.follow) {
    const lines: unknown[] = []
    // A pod's members line by line under their names; one member's (--member) as it came.
    const labels = memberLines((stream, text) => void process[stream].write(text))
    const line = (stream: 'stdout' | 'stderr', data: string, of?: string) =>
      void (opts.json
        ? lines.push({ stream, data, ...(of !== undefined ? { member: of } : {}) })
        : labels.piece(stream, data, member === undefined ? of : undefined))
    const state = await streamLogs(
      opts.socket,
      id,
      { stdout: (d, of) => line('stdout', d, of), stderr: (d, of) => line('stderr', d, of) },
      member,
    )
      .catch((err: unknown) => apiProblem(err))
      .finally(() => labels.end())
    if (state === undefined) throw new CliError(new RouteMissingError(opts.socket, `GET ${path}`).message)
    if (opts.json) printData({ lines, state })
    return
  }
  type Logs = { stdout: string; stderr: string; truncated: boolean }
  const logs = await new ApiClient(opts.socket)
    .ok<Logs & { members?: Array<Logs & { name: string }> }>('GET', path)
    .catch((err: unknown) => apiProblem(err))
  if (opts.json) return printData(logs)
  const parts = logs.members ?? [logs]
  if (parts.every((p) => p.stdout === '' && p.stderr === '')) await neverRan(opts.socket, id)
  writeOutput(logs)
  if (parts.some((p) => p.truncated) || logs.truncated) process.stderr.write(`${truncatedNote(id)}\n`)
}

/** Fails with why a job has no logs when it never started running (no bids, refused, cancelled). */
async function neverRan(socket: string, id: string): Promise<void> {
  const job = await new ApiClient(socket)
    .ok<JobView>('GET', `/v1/jobs/${encodeURIComponent(id)}`)
    .catch(() => undefined)
  if (job === undefined || !Array.isArray(job.history) || job.history.some((h) => h.state === 'running'))
    return
  const why = job.error ? `: ${job.error.code}: ${job.error.message}` : ''
  throw new CliError(
    FINAL.has(job.state)
      ? `job ${id} never ran (${job.state}${why}): it has no logs`
      : `job ${id} has not started running yet (${job.state}): no logs so far; --follow waits for them`,
  )
}

interface OutputsView {
  archive: { sha256: string; size: number } | null
  files: Array<{ path: string; sha256: string; size: number }>
}

/** A path inside `dir` for an output's relative path, refusing absolute paths and `..`. */
export function outputTarget(dir: string, path: string): string {
  const target = resolvePath(dir, path)
  if (isAbsolute(path) || !target.startsWith(resolvePath(dir) + sep))
    throw new CliError(`refusing output path ${JSON.stringify(path)}: it leaves ${dir}`)
  return target
}

/**
 * `subtree`: only the files under `<subtree>/` (a pod member's, specs/workflow.md "Pods"), written
 * without that prefix, and no outputs.tar (the archive is the whole pod's).
 */
export async function jobOutputsCommand(
  id: string,
  opts: { socket: string; json?: boolean; out?: string; force?: boolean; subtree?: string },
): Promise<void> {
  id = await resolveJobId(opts.socket, id)
  const base = `/v1/jobs/${encodeURIComponent(id)}/outputs`
  const all = await new ApiClient(opts.socket)
    .ok<OutputsView>('GET', base)
    .catch((err: unknown) => apiProblem(err))
  const prefix = opts.subtree === undefined ? '' : `${opts.subtree}/`
  const view: OutputsView =
    opts.subtree === undefined
      ? all
      : { files: all.files.filter((f) => f.path.startsWith(prefix)), archive: null }
  const own = (path: string) => path.slice(prefix.length)
  if (opts.out === undefined) {
    if (opts.json) return printData(view)
    if (view.files.length === 0) print('no output files')
    else
      printRows<OutputsView['files'][number]>(
        [
          { header: 'SIZE', cell: (f) => f.size },
          { header: 'SHA256', cell: (f) => (isWide() ? f.sha256 : `${f.sha256.slice(0, 16)}…`) },
          { header: 'PATH', cell: (f) => f.path },
        ],
        view.files,
      )
    if (view.archive) print(`archive: outputs.tar, ${view.archive.size} bytes, sha256 ${view.archive.sha256}`)
    return
  }
  // Nothing is overwritten unless asked: checked for every file before the first is fetched.
  const targets = [...view.files.map((f) => own(f.path)), ...(view.archive ? ['outputs.tar'] : [])]
  const existing = targets.map((p) => outputTarget(opts.out as string, p)).filter((f) => existsSync(f))
  if (existing.length > 0 && opts.force !== true)
    throw new CliError(
      `${existing[0]}${existing.length > 1 ? ` and ${existing.length - 1} more` : ''} already exist: give --force to overwrite, or another --out`,
    )
  const written: Array<{ path: string; file: string; size: number }> = []
  // Each file goes straight to disk, hashed as it arrives, and is kept only if the hash matches.
  const fetchTo = async (route: string, file: string, sha256: string) => {
    await mkdir(dirname(file), { recursive: true })
    const part = `${file}.part`
    // One left by a crash goes (a symlink only loses its link); the download then makes a new file.
    await rm(part, { force: true })
    try {
      const got = await downloadTo(opts.socket, route, part)
      if (got.sha256 !== sha256)
        throw new CliError(`${route}: sha256 ${got.sha256} does not match the listed ${sha256}`)
      await rename(part, file)
      return got.size
    } finally {
      await rm(part, { force: true })
    }
  }
  try {
    for (const f of view.files) {
      const file = outputTarget(opts.out, own(f.path))
      const route = `${base}/${f.path.split('/').map(encodeURIComponent).join('/')}`
      written.push({ path: f.path, file, size: await fetchTo(route, file, f.sha256) })
    }
    if (view.archive) {
      const file = outputTarget(opts.out, 'outputs.tar')
      written.push({
        path: 'outputs.tar',
        file,
        size: await fetchTo(`${base}.tar`, file, view.archive.sha256),
      })
    }
  } catch (err) {
    apiProblem(err)
  }
  if (opts.json) return printData({ written })
  printTable(
    ['FILE', 'SIZE'],
    written.map((w) => [w.file, w.size]),
  )
}

export async function jobCancelCommand(id: string, opts: { socket: string; json?: boolean }): Promise<void> {
  id = await resolveJobId(opts.socket, id)
  const res = await new ApiClient(opts.socket)
    .ok<{ id: string; state: string }>('DELETE', `/v1/jobs/${encodeURIComponent(id)}`)
    .catch((err: unknown) => apiProblem(err, 'cancel refused: '))
  if (opts.json) printData(res)
  else printSafe(`job ${res.id}: ${res.state}`)
}
