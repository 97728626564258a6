/**
 * `dms job status`: a job's state, history, bids, contract, allocation, usage and settlement, as
 * lines (`--watch` prints them again as the job changes: job-watch.ts).
 */
import { ApiClient } from '../api/client.js'
import { priceView } from '../pricing/price.js'
import { priceOf } from '../pricing/terms.js'
import { apiProblem, FINAL, type JobView } from './job.js'
import { resolveJobId } from './job-id.js'
import { printData, printSafe } from './output.js'

/** What a scheduled or queued job waits for, for `job status`; undefined in any other state. */
export function waitingFor(job: JobView): string | undefined {
  const iso = (t: number) => new Date(t).toISOString()
  if (job.state === 'scheduled' && job.spec.startAt !== undefined)
    return `waiting: starts bidding at ${iso(job.spec.startAt)}`
  if (job.state === 'queued' && job.queue !== undefined)
    return (
      `waiting: for a provider with room until ${iso(job.queue.deadline)} ` +
      `(${job.queue.rounds} bid rounds so far; bids again on capacity news, a provider joining, or a backoff)`
    )
  // A provider that bid for a later start holds the run until its slot (specs/queueing.md).
  if (job.state !== 'invoking' && job.state !== 'running') return undefined
  const step = (job.updates ?? []).findLast((u) => u.detail !== 'heartbeat')
  if (step?.state === 'waiting' && job.winner) {
    const by = job.contract?.terms.startBy
    return `waiting for its slot on ${job.winner.provider}${by !== undefined ? ` (starts by ${iso(by)})` : ''}`
  }
  return undefined
}

/** A job as `GET /v1/jobs/:id` answers it, with its usage. */
export type JobStatusView = JobView & {
  usage?: { wallSeconds: number } | null
  liveUsage?: { cpuSeconds: number; memoryBytes: number; logBytes: number; wallSeconds: number } | null
}

export async function jobStatusCommand(id: string, opts: { socket: string; json?: boolean }): Promise<void> {
  id = await resolveJobId(opts.socket, id)
  const job = await readJob(opts.socket, id)
  if (opts.json) return printData(job)
  for (const l of jobStatusLines(job)) printSafe(l)
}

/** `GET /v1/jobs/:id`, its errors as one-line CLI errors. */
export const readJob = (socket: string, id: string): Promise<JobStatusView> =>
  new ApiClient(socket)
    .ok<JobStatusView>('GET', `/v1/jobs/${encodeURIComponent(id)}`)
    .catch((err: unknown) => apiProblem(err))

/** What `job status` prints of a job, line by line (not yet made terminal-safe). */
export function jobStatusLines(job: JobStatusView): string[] {
  const out: string[] = []
  const line = (s: string) => void out.push(s)
  line(`${job.id}  ${job.state}${job.spec.name ? `  (${job.spec.name})` : ''}`)
  for (const h of job.history) line(`  ${new Date(h.at).toISOString()}  ${h.state}`)
  const waiting = waitingFor(job)
  if (waiting !== undefined) line(waiting)
  for (const d of job.queue?.declines ?? [])
    line(`declined while queued: ${d.provider.slice(-8)}: ${d.reasons.join('; ')}`)
  line(`bids: ${job.bids.length}, declines: ${job.declines.length}`)
  for (const a of job.attempts ?? []) line(`attempt: ${a.provider} (${a.error.code}: ${a.error.message})`)
  for (const f of job.spec.inputs ?? [])
    line(
      `input: /inputs/${f.path}${f.sha256 ? `  blob ${f.sha256.slice(0, 16)}…` : ''}${f.size !== undefined ? `  ${f.size} bytes` : ''}`,
    )
  if (job.rerunOf) line(`rerun of: ${job.rerunOf}`)
  if (job.spec.queue) line(`queue: ${job.spec.queue}`)
  if (job.retryAt !== undefined) line(`next attempt at: ${new Date(job.retryAt).toISOString()}`)
  if (job.winner) line(`provider: ${job.winner.provider} (${job.winner.why})`)
  if (job.contract)
    line(
      `contract: ${job.contract.terms.contractId}, escrow ${job.contract.terms.escrow}, price ${priceView(priceOf(job.contract.terms.bid)).price}`,
    )
  if (job.allocationId) line(`allocation: ${job.allocationId}`)
  const live = job.liveUsage
  if (live && !FINAL.has(job.state))
    line(
      `usage so far: ${live.cpuSeconds.toFixed(2)}s cpu, ${live.memoryBytes} bytes memory peak, ${live.logBytes} bytes of logs, ${live.wallSeconds.toFixed(1)}s wall`,
    )
  if (job.usage) line(`usage: ${job.usage.wallSeconds.toFixed(2)}s wall`)
  if (job.result)
    line(`result: ${job.result.receipt.receipt.status}, exit code ${job.result.receipt.receipt.exitCode}`)
  // A pod: one line per member, its result once it came (specs/job-spec.md, "Pods").
  for (const m of job.spec.members ?? []) {
    const r = job.result?.members?.find((x) => x.name === m.name)
    line(
      `member ${m.name}: ${m.image}${m.network === true ? ', network' : ''}${
        r !== undefined
          ? `  ${r.status}, exit code ${r.exitCode}${r.reason !== undefined ? ` (${r.reason})` : ''}`
          : ''
      }`,
    )
  }
  if (job.settlement)
    line(`settled: paid ${job.settlement.paidToProvider}, refunded ${job.settlement.refundedToRequester}`)
  if (job.error) line(`error: ${job.error.code}: ${job.error.message}`)
  return out
}
