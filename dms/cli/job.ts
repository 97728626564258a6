import { readFile } from 'node:fs/promises'
import { ApiClient, ApiClientError } from '../api/client.js'
import type { JobRecord } from '../orchestrator/job-record.js'
import { CliError, print, printJson } from './output.js'

export type JobView = JobRecord & { state: string }
const FINAL = new Set(['completed', 'failed', 'cancelled'])

export interface JobRunOptions {
  socket: string
  file?: string
  image?: string
  cpu?: string
  memory?: string
  timeout?: string
  maxPrice?: string
  name?: string
  wait?: boolean
  json?: boolean
}

async function specFrom(opts: JobRunOptions, command: string[]): Promise<unknown> {
  if (opts.file !== undefined) {
    try {
      return JSON.parse(await readFile(opts.file, 'utf8'))
    } catch (err) {
      throw new CliError(`cannot read job spec ${opts.file}: ${(err as Error).message}`)
    }
  }
  if (opts.image === undefined || command.length === 0)
    throw new CliError('give a spec with -f spec.json, or --image IMAGE and a command after --')
  const num = (flag: string, v: string | undefined, dflt: number) => {
    if (v === undefined) return dflt
    const n = Number(v)
    if (!Number.isFinite(n)) throw new CliError(`${flag} must be a number, got ${v}`)
    return n
  }
  return {
    name: opts.name,
    image: opts.image,
    command,
    resources: { cpu: num('--cpu', opts.cpu, 1), memory: opts.memory ?? '256MiB' },
    maxDuration: num('--timeout', opts.timeout, 300),
    maxPrice: num('--max-price', opts.maxPrice, 100_000),
  }
}

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

export async function jobRunCommand(command: string[], opts: JobRunOptions): Promise<void> {
  const api = new ApiClient(opts.socket)
  const spec = await specFrom(opts, command)
  let id: string
  try {
    id = (await api.ok<{ id: string }>('POST', '/v1/jobs', spec)).id
  } catch (err) {
    if (err instanceof ApiClientError) throw new CliError(`job refused: ${err.message}`)
    throw err
  }
  if (!opts.wait) {
    if (opts.json) printJson({ id })
    else print(id)
    return
  }
  if (!opts.json) print(`job ${id}`)
  let t0: number | undefined
  const job = await follow(api, id, (h) => {
    if (!opts.json) print(`  ${String(h.at - (t0 ??= h.at)).padStart(6)} ms  ${h.state}`)
  })
  if (opts.json) printJson(job)
  else {
    if (job.result) process.stdout.write(job.result.stdout)
    if (job.error) print(`${job.state}: ${job.error.code}: ${job.error.message}`)
  }
  if (job.state !== 'completed')
    throw new CliError(`job ${id} ${job.state}${job.error ? `: ${job.error.message}` : ''}`, 2)
}

export async function jobStatusCommand(id: string, opts: { socket: string; json?: boolean }): Promise<void> {
  const api = new ApiClient(opts.socket)
  let job: JobView
  try {
    job = await api.ok<JobView>('GET', `/v1/jobs/${id}`)
  } catch (err) {
    if (err instanceof ApiClientError) throw new CliError(err.message)
    throw err
  }
  if (opts.json) {
    printJson(job)
    return
  }
  print(`${job.id}  ${job.state}${job.spec.name ? `  (${job.spec.name})` : ''}`)
  for (const h of job.history) print(`  ${new Date(h.at).toISOString()}  ${h.state}`)
  for (const a of job.attempts ?? []) print(`dropped: ${a.provider} (${a.error.code}: ${a.error.message})`)
  if (job.winner) print(`provider: ${job.winner.provider} (${job.winner.why})`)
  if (job.settlement)
    print(`settled: paid ${job.settlement.paidToProvider}, refunded ${job.settlement.refundedToRequester}`)
  if (job.error) print(`error: ${job.error.code}: ${job.error.message}`)
}

/** `dms job cancel <id>`: asks the requester to cancel (DELETE /v1/jobs/:id); prints the state. */
export async function jobCancelCommand(id: string, opts: { socket: string; json?: boolean }): Promise<void> {
  const api = new ApiClient(opts.socket)
  let res: { id: string; state: string }
  try {
    res = await api.ok<{ id: string; state: string }>('DELETE', `/v1/jobs/${id}`)
  } catch (err) {
    if (err instanceof ApiClientError) throw new CliError(err.message)
    throw err
  }
  if (opts.json) printJson(res)
  else print(`${res.id}  ${res.state}`)
}
