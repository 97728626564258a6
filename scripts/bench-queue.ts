/**
 * A burst of jobs posted at once to two small providers (room for two 0.5-cpu jobs each; a test
 * executor whose runs take 5 ms, so the market's own work is what is measured), with and without
 * queueing (the scenario of test/integration/queue/burst.spec.ts):
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-queue.ts [--jobs N] [--no-queue]
 *     [--requester-share S]   (a provider's requesterCap.maxReservedShare, default 0.5)
 *
 * Prints the drain time (first post -> last job ended), jobs by final state, how long the jobs
 * waited in `queued`, their bid rounds, what woke them, and the machine's load. Figures and
 * analysis: specs/benchmarks.md ("Queued burst").
 */
import '../actors/polyfill.js'
import { cpus, loadavg } from 'node:os'
import { parseJobSpec } from '../dms/orchestrator/job-spec.js'
import { CountingExecutor } from '../test/helpers/counting-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE } from '../test/helpers/network.js'

const arg = (name: string) => {
  const i = process.argv.indexOf(name)
  return i < 0 ? undefined : process.argv[i + 1]
}
const JOBS = Number(arg('--jobs') ?? 200)
const QUEUE = !process.argv.includes('--no-queue')
/** One requester may hold this share of a provider's offer in bids not yet invoked (default 0.5). */
const SHARE = Number(arg('--requester-share') ?? 0.5)
const MiB = 1024 * 1024

setTimeout(() => {
  console.error('bench-queue: 15 minutes passed, exiting')
  process.exit(3)
}, 15 * 60_000).unref()

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? 0

async function main(): Promise<void> {
  const executor = new CountingExecutor(5)
  const small = {
    cpu: 1,
    memoryBytes: 512 * MiB,
    perCpuHour: 1000,
    policy: { requesterCap: { maxReservedShare: SHARE } },
  }
  const net = await startNetwork([small, small], {
    components: { executor },
    requester: { bidWindowMs: 1000, queueTimeoutSeconds: QUEUE ? 600 : 0 },
  })
  try {
    const orch = net.requester.orchestrator!
    const spec = parseJobSpec({
      image: TEST_IMAGE,
      command: ['true'],
      resources: { cpu: 0.5, memory: '32MiB', disk: '64MiB' },
      maxDuration: 60,
      maxPrice: 100_000,
    })
    const load = loadavg()[0]
    const t0 = Date.now()
    // Progress on stderr every 5 s: jobs by state.
    const progress = setInterval(() => {
      void orch.list().then((jobs) => {
        const by: Record<string, number> = {}
        for (const j of jobs) by[j.state] = (by[j.state] ?? 0) + 1
        console.error(
          `${Math.round((Date.now() - t0) / 1000)} s`,
          JSON.stringify(by),
          JSON.stringify(orch.capacityNews.counts),
        )
      })
    }, 5000)
    const posted = await Promise.all(Array.from({ length: JOBS }, () => orch.post(spec)))
    const ended = await Promise.all(posted.map((p) => jobReaches(net.requester, p.record.id)))
    const drainMs = Date.now() - t0
    clearInterval(progress)
    const states: Record<string, number> = {}
    const codes: Record<string, number> = {}
    const wokenBy: Record<string, number> = {}
    const queuedMs: number[] = []
    const rounds: number[] = []
    for (const j of ended) {
      states[j.state] = (states[j.state] ?? 0) + 1
      if (j.record.error) codes[j.record.error.code] = (codes[j.record.error.code] ?? 0) + 1
      const h = j.record.history
      let waited = 0
      for (let i = 0; i < h.length - 1; i++) if (h[i].state === 'queued') waited += h[i + 1].at - h[i].at
      queuedMs.push(waited)
      rounds.push(j.record.queue?.rounds ?? 0)
      const w = j.record.queue?.wokenBy?.split(' ')[0]
      if (w !== undefined) wokenBy[w] = (wokenBy[w] ?? 0) + 1
    }
    console.log(
      JSON.stringify({
        jobs: JOBS,
        queue: QUEUE,
        requesterShare: SHARE,
        drainMs,
        jobsPerSecond: Math.round((JOBS / drainMs) * 1000 * 10) / 10,
        states,
        failures: codes,
        queuedMs: { p50: pct(queuedMs, 0.5), p90: pct(queuedMs, 0.9), max: pct(queuedMs, 1) },
        bidRounds: { p50: pct(rounds, 0.5), max: pct(rounds, 1) },
        lastWokenBy: wokenBy,
        capacityNewsSent: net.providers.map((p) => p.provider!.capacityNews.sent),
        capacityNewsKept: orch.capacityNews.counts,
        maxRunning: executor.maxRunning,
        load1AtStart: Math.round(load * 10) / 10,
        cpus: cpus().length,
      }),
    )
  } finally {
    await net.stop()
  }
}

await main()
