/** What every bench-journey section shares: settings, the job, the network, percentiles, tables. */
import { cpus } from 'node:os'
import { join } from 'node:path'
import type { Engine } from '../../dms/executor/engine.js'
import type { JobUpdate } from '../../dms/protocol/messages.js'
import { parseJobSpec } from '../../dms/orchestrator/job-spec.js'
import type { StoredJob } from '../../dms/orchestrator/orchestrator.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../test/helpers/network.js'

export const QUICK = process.argv.includes('--quick')
export const JOBS = Number(process.env.BENCH_JOBS ?? (QUICK ? 5 : 20))
export const TP_JOBS = Number(process.env.BENCH_THROUGHPUT_JOBS ?? (QUICK ? 60 : 300))
export const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50)
export const SCALE = (process.env.BENCH_SCALE ?? (QUICK ? '10,20' : '10,50,100')).split(',').map(Number)
export const MiB = 1024 * 1024
export const ROOT = join(import.meta.dirname, '../..')

export const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
export const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '-')

/** Everything measured, written as JSON under bench/results/ at the end. */
export const results: Record<string, unknown> = {
  at: new Date().toISOString(),
  machine: { cores: cpus().length, model: cpus()[0]?.model },
}

export function table(title: string, head: string[], rows: Array<Array<string | number>>): void {
  const all = [head, ...rows.map((r) => r.map(String))]
  const width = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)))
  console.log(`\n${title}\n`)
  for (const [n, r] of all.entries()) {
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(width[i]) : c.padStart(width[i]))).join('  '))
    if (n === 0) console.log(width.map((w) => '-'.repeat(w)).join('  '))
  }
}

/** A requester, `providers` providers and a contract-db, all in this process. */
export async function network(providers: number, executor: Engine): Promise<TestNetwork> {
  return startNetwork(
    Array.from({ length: providers }, (_, i) => ({
      cpu: 64,
      memoryBytes: 64 * 1024 * MiB,
      // Room for 64 jobs at the default disk quota (256 MiB) each.
      diskBytes: 16 * 1024 * MiB,
      perCpuHour: 1000 + i,
    })),
    {
      components: { executor },
      // The window closes as soon as 3 bids are in (or every provider answered).
      requester: { bidWindowMs: 3000, enoughBids: 3 },
      fund: 1_000_000_000_000,
    },
  )
}

/** The job every section runs, as a REST body and parsed. */
export const JOB_BODY = {
  image: TEST_IMAGE,
  command: ['true'],
  resources: { cpu: 0.1, memory: '16MiB' },
  maxDuration: 60,
  maxPrice: 1_000_000,
}
export const spec = parseJobSpec(JOB_BODY)

export interface Timed {
  total: number
  /** ms from post to the provider's `running` update. */
  toRunning: number
  phases: Record<string, number>
}

/** Posts one job and waits for it to end; the phases are the gaps between its states. */
export async function oneJob(net: TestNetwork): Promise<Timed> {
  const orch = net.requester.orchestrator!
  const t0 = Date.now()
  let runningAt = NaN
  const off = orch.onUpdate((_id, u: JobUpdate) => {
    if (u.state === 'running' && Number.isNaN(runningAt)) runningAt = u.at
  })
  const posted = await orch.post(spec)
  const job = await jobReaches(net.requester, posted.record.id)
  off()
  if (job.state !== 'completed') throw new Error(`job ${job.state}: ${JSON.stringify(job.record.error)}`)
  return { total: Date.now() - t0, toRunning: runningAt - t0, phases: phasesOf(job) }
}

/** Time spent in each state of the job machine, plus the provider's own steps inside `running`. */
function phasesOf(job: StoredJob): Record<string, number> {
  const h = job.record.history
  const out: Record<string, number> = {}
  for (let i = 0; i + 1 < h.length; i++) out[h[i].state] = (out[h[i].state] ?? 0) + h[i + 1].at - h[i].at
  const u = job.record.updates
  const at = (s: string) => u.find((x) => x.state === s)?.at
  const prov = at('provisioning')
  const run = at('running')
  const pub = at('publishing')
  if (prov !== undefined && run !== undefined) out['  provisioning'] = run - prov
  if (run !== undefined && pub !== undefined) out['  run'] = pub - run
  return out
}
