/**
 * The market's cost per job as the network grows (issue 22, target 2): real nodes at 10 and 100
 * providers, each job once through a requester that asks everyone on gossip (`bidSample: 0`, the
 * old behaviour) and once through one that asks a sample (bid-sample.ts, the default); then a
 * simulation of the same decision code for 100 / 1000 / 10 000 providers. Not a test: it prints
 * numbers (specs/benchmarks.md, "Market cost per job").
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-market.ts [--providers 10,100]
 *     [--jobs 20] [--only real|sim] [--procs N]
 *
 * Every node is real (libp2p on 127.0.0.1, level in a temp dir, sealed keys, the noop executor).
 * By default they all share this one process; `--procs N` runs the providers in N host processes
 * (scripts/bench-market-host.ts) and the contract-db and requesters here (bench-market-procs.ts).
 * The job, the counters and the series of jobs are in bench-market-measure.ts. "CPU ms" is every
 * node's work for the job, in every process: the requester, the providers and the contract-db.
 * "delivered" counts envelopes delivered to a handler (a gossip publish counts once per
 * subscriber reached); "sent" (one process only) counts envelopes sealed and sent or published.
 * Writes bench/results/market-<time>.json.
 */
import '../actors/polyfill.js'
import { mkdirSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { NoopExecutor } from '../dms/executor/noop.js'
import { DEFAULT_BID_SAMPLE } from '../dms/orchestrator/bid-sample.js'
import { ENOUGH_BIDS, measure, r1, read, type Modes, type Row } from './bench-market-measure.js'
import { Sends } from './bench-market-probes.js'
import { realProcs } from './bench-market-procs.js'
import { simulate, type SimRow } from './bench-market-sim.js'
import { startNetwork, type TestNetwork } from '../test/helpers/network.js'

const MiB = 1024 * 1024
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : dflt
}
const SIZES = arg('providers', '10,100').split(',').map(Number)
const JOBS = Number(arg('jobs', '20'))
const ONLY = arg('only', 'real,sim').split(',')
/** Provider host processes (0: every node in this process). */
const PROCS = Number(arg('procs', '0'))

function table(title: string, head: string[], rows: Array<Array<string | number>>): void {
  const all = [head, ...rows.map((r) => r.map(String))]
  const width = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)))
  console.log(`\n${title}\n`)
  for (const [n, r] of all.entries()) {
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(width[i]) : c.padStart(width[i]))).join('  '))
    if (n === 0) console.log(width.map((w) => '-'.repeat(w)).join('  '))
  }
}

/** Every node in this process (the test network helper). */
async function real(providers: number): Promise<Row[]> {
  const net: TestNetwork = await startNetwork(
    Array.from({ length: providers }, (_, i) => ({
      cpu: 64,
      memoryBytes: 64 * 1024 * MiB,
      diskBytes: 16 * 1024 * MiB,
      perCpuHour: 1000 + i,
    })),
    {
      components: { executor: new NoopExecutor() },
      requester: { bidWindowMs: 3000, enoughBids: ENOUGH_BIDS },
      fund: 1_000_000_000_000,
    },
  )
  try {
    const everyone = await net.addRequester('requester-everyone', {
      bidWindowMs: 3000,
      enoughBids: ENOUGH_BIDS,
      bidSample: 0,
    })
    const nodes = [net.contractDb, ...net.providers, net.requester, everyone]
    const sends = new Sends()
    for (const n of nodes) sends.watch(n.system)
    const modes: Modes = [
      ['everyone (bidSample 0)', everyone],
      ['sample (default)', net.requester],
    ]
    return await measure(providers, modes, () => Promise.resolve(read(nodes, sends)), 1, JOBS)
  } finally {
    await net.stop()
  }
}

const results: Record<string, unknown> = {
  at: new Date().toISOString(),
  loadavgAtStart: loadavg().map(r1),
  jobs: JOBS,
  enoughBids: ENOUGH_BIDS,
  bidSample: DEFAULT_BID_SAMPLE,
}

if (ONLY.includes('real')) {
  const rows: Row[] = []
  for (const n of SIZES) {
    // A network that did not come up (a timeout on a loaded machine) is started again, once.
    const run = () => (PROCS > 0 ? realProcs(n, PROCS, JOBS) : real(n))
    const got = await run().catch((err: unknown) => {
      console.error(`${n} providers: ${(err as Error).message}; starting again`)
      return run()
    })
    console.error(JSON.stringify(got))
    rows.push(...got)
  }
  results.real = rows
  table(
    `real nodes (${PROCS > 0 ? `providers in ${PROCS} host processes` : 'all in one process'}), noop executor, ${JOBS} sequential jobs each, per job (load average ${loadavg()[0].toFixed(1)})`,
    [
      'providers',
      'asked',
      'failed',
      'bid answers',
      'delivered',
      'sent',
      'CPU ms',
      'idle CPU ms',
      'bidding p50',
      'post→running p50',
    ],
    rows.map((r) => [
      r.providers,
      r.mode,
      r.failed,
      r.bidAnswersPerJob,
      r.deliveredPerJob,
      r.sentPerJob < 0 ? '-' : r.sentPerJob,
      r.cpuMsPerJob,
      r.idleCpuMsPerJob,
      r.biddingP50,
      r.postToRunningP50,
    ]),
  )
}

if (ONLY.includes('sim')) {
  const rows: SimRow[] = []
  for (const n of [100, 1000, 10_000])
    for (const [canTake, silent] of [
      [1, 0],
      [0.5, 0.2],
      [0.05, 0],
    ])
      for (const sample of [0, DEFAULT_BID_SAMPLE])
        rows.push(simulate(n, canTake, silent, sample, n >= 10_000 ? 20 : 100, ENOUGH_BIDS))
  results.simulation = rows
  table(
    'simulation (bid-sample.ts, no network), per job',
    ['providers', 'can take', 'silent', 'asked', 'requests', 'answers', 'reservations', 'asks'],
    rows.map((r) => [
      r.providers,
      r.canTake,
      r.silent,
      r.mode,
      r.requestsPerJob,
      r.answersPerJob,
      r.reservationsPerJob,
      r.asksPerJob,
    ]),
  )
}

results.loadavgAtEnd = loadavg().map(r1)
const dir = join(import.meta.dirname, '..', 'bench', 'results')
mkdirSync(dir, { recursive: true })
const file = join(dir, `market-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
console.log(`\nwritten: ${file}`)
process.exit(0)
