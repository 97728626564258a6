/**
 * The market's cost per job as the network grows (issue 22, target 2): real nodes at 10 and 100
 * providers, each job once through a requester that asks everyone on gossip (`bidSample: 0`, the
 * old behaviour) and once through one that asks a sample (bid-sample.ts, the default); then a
 * simulation of the same decision code for 100 / 1000 / 10 000 providers. Not a test: it prints
 * numbers (specs/benchmarks.md, "Market cost per job").
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-market.ts [--providers 10,100]
 *     [--jobs 20] [--only real|sim]
 *
 * Every node is real (libp2p on 127.0.0.1, level in a temp dir, sealed keys, the noop executor)
 * and all of them share this one process, so "CPU ms" is every node's work for the job: the
 * requester, the providers and the contract-db. Writes bench/results/market-<time>.json.
 */
import '../actors/polyfill.js'
import { mkdirSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ActorSystem } from '../actors/system.js'
import { NoopExecutor } from '../dms/executor/noop.js'
import type { DmsNode } from '../dms/node.js'
import { DEFAULT_BID_SAMPLE, SamplePlan, sampleOrder } from '../dms/orchestrator/bid-sample.js'
import { parseJobSpec } from '../dms/orchestrator/job-spec.js'
import { W } from '../dms/protocol/behaviours.js'
import type { JobUpdate } from '../dms/protocol/messages.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../test/helpers/network.js'

const MiB = 1024 * 1024
const ENOUGH_BIDS = 3
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : dflt
}
const SIZES = arg('providers', '10,100').split(',').map(Number)
const JOBS = Number(arg('jobs', '20'))
const ONLY = arg('only', 'real,sim').split(',')

const spec = parseJobSpec({
  image: TEST_IMAGE,
  command: ['true'],
  resources: { cpu: 0.1, memory: '16MiB' },
  maxDuration: 60,
  maxPrice: 1_000_000,
})

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const r1 = (x: number) => Math.round(x * 10) / 10

function table(title: string, head: string[], rows: Array<Array<string | number>>): void {
  const all = [head, ...rows.map((r) => r.map(String))]
  const width = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)))
  console.log(`\n${title}\n`)
  for (const [n, r] of all.entries()) {
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(width[i]) : c.padStart(width[i]))).join('  '))
    if (n === 0) console.log(width.map((w) => '-'.repeat(w)).join('  '))
  }
}

/** Counts what every node's actor system sends, by behaviour (bench instrumentation only). */
class Sends {
  readonly byBehaviour: Record<string, number> = {}
  watch(system: ActorSystem): void {
    const count = (b: string) => (this.byBehaviour[b] = (this.byBehaviour[b] ?? 0) + 1)
    const send = system.sendEnvelope.bind(system)
    system.sendEnvelope = (actor, to, behaviour, payload, opts) => {
      count(behaviour)
      return send(actor, to, behaviour, payload, opts)
    }
    const publish = system.publish.bind(system)
    system.publish = (actor, topic, behaviour, payload, ttlMs) => {
      count(`${behaviour} (gossip)`)
      return publish(actor, topic, behaviour, payload, ttlMs)
    }
  }
  get(b: string): number {
    return this.byBehaviour[b] ?? 0
  }
}

interface Counters {
  cpuMs: number
  delivered: number
  bidAnswers: number
  sent: number
}

function read(nodes: Array<{ system: ActorSystem }>, sends: Sends): Counters {
  const u = process.cpuUsage()
  return {
    cpuMs: (u.user + u.system) / 1000,
    delivered: nodes.reduce((s, n) => s + n.system.metrics().delivered, 0),
    bidAnswers: sends.get(W.bid.name) + sends.get(W.decline.name),
    sent: Object.values(sends.byBehaviour).reduce((a, b) => a + b, 0),
  }
}

/** Posts one job on `node` and waits for it to end: ms from post to the provider's `running`. */
async function oneJob(node: DmsNode): Promise<number> {
  const orch = node.orchestrator!
  const t0 = Date.now()
  let runningAt = NaN
  const off = orch.onUpdate((_id, u: JobUpdate) => {
    if (u.state === 'running' && Number.isNaN(runningAt)) runningAt = u.at
  })
  const posted = await orch.post(spec)
  const job = await jobReaches(node, posted.record.id)
  off()
  if (job.state !== 'completed') throw new Error(`job ${job.state}: ${JSON.stringify(job.record.error)}`)
  return runningAt - t0
}

interface Row {
  providers: number
  mode: 'everyone (bidSample 0)' | 'sample (default)'
  jobs: number
  bidAnswersPerJob: number
  deliveredPerJob: number
  sentPerJob: number
  cpuMsPerJob: number
  idleCpuMsPerJob: number
  postToRunningP50: number
}

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
    // Idle CPU of the whole network (gossip heartbeats, pings), to set against each job's.
    const idle0 = read(nodes, sends)
    const idleWall0 = Date.now()
    await sleep(3000)
    const idlePerMs = (read(nodes, sends).cpuMs - idle0.cpuMs) / (Date.now() - idleWall0)
    const rows: Row[] = []
    for (const [mode, node] of [
      ['everyone (bidSample 0)', everyone],
      ['sample (default)', net.requester],
    ] as const) {
      await oneJob(node) // warm-up: connections, image check caches
      const before = read(nodes, sends)
      const wall0 = Date.now()
      const toRunning: number[] = []
      for (let i = 0; i < JOBS; i++) toRunning.push(await oneJob(node))
      const after = read(nodes, sends)
      const wall = Date.now() - wall0
      rows.push({
        providers,
        mode,
        jobs: JOBS,
        bidAnswersPerJob: r1((after.bidAnswers - before.bidAnswers) / JOBS),
        deliveredPerJob: r1((after.delivered - before.delivered) / JOBS),
        sentPerJob: r1((after.sent - before.sent) / JOBS),
        cpuMsPerJob: r1((after.cpuMs - before.cpuMs) / JOBS),
        idleCpuMsPerJob: r1((idlePerMs * wall) / JOBS),
        postToRunningP50: p50(toRunning),
      })
    }
    return rows
  } finally {
    await net.stop()
  }
}

interface SimRow {
  providers: number
  canTake: string
  silent: string
  mode: string
  requestsPerJob: number
  answersPerJob: number
  reservationsPerJob: number
  asksPerJob: number
}

/**
 * The same decision code (sampleOrder, SamplePlan) with no network: `providers` peers, of which a
 * share `canTake` would bid and a share `silent` never answers (the rest decline). A direct ask
 * costs one request per peer asked; a gossip ask one delivery per subscriber. Every peer asked
 * that is not silent answers (bid or decline), also after its window closed; each bid holds a
 * reservation. A round ends once `ENOUGH_BIDS` bids are in or after the gossip ask.
 */
function simulate(providers: number, canTake: number, silent: number, sample: number, jobs: number): SimRow {
  const peers = Array.from({ length: providers }, (_, i) => `peer-${i}`)
  // Which peers would bid / stay silent: fixed per peer (by its index), the same for every job.
  const kind = (i: number) =>
    i < silent * providers ? 'silent' : i < (silent + canTake) * providers ? 'bid' : 'decline'
  const kinds = new Map(peers.map((p, i) => [p, kind(i)]))
  let requests = 0
  let answers = 0
  let bids = 0
  let asks = 0
  for (let j = 0; j < jobs; j++) {
    const plan = new SamplePlan(
      sampleOrder(`job-${j}`, peers, () => false),
      sample,
    )
    const bidders = new Set<string>()
    for (let a = plan.next(); a !== undefined; a = plan.next()) {
      asks++
      const asked = a.kind === 'direct' ? a.peers : peers
      requests += asked.length
      for (const p of asked) {
        if (kinds.get(p) === 'silent') continue
        answers++
        // A peer asked again (the gossip after its direct ask) answers with the same bid.
        if (kinds.get(p) === 'bid' && !bidders.has(p)) {
          bidders.add(p)
          bids++
        }
      }
      if (a.kind === 'gossip' || bidders.size >= ENOUGH_BIDS) break
    }
  }
  return {
    providers,
    canTake: `${canTake * 100}%`,
    silent: `${silent * 100}%`,
    mode: sample === 0 ? 'everyone' : `sample ${sample}`,
    requestsPerJob: r1(requests / jobs),
    answersPerJob: r1(answers / jobs),
    reservationsPerJob: r1(bids / jobs),
    asksPerJob: r1(asks / jobs),
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
  for (const n of SIZES) rows.push(...(await real(n)))
  results.real = rows
  table(
    `real nodes in one process, noop executor, ${JOBS} sequential jobs each (per job; load average ${loadavg()[0].toFixed(1)})`,
    [
      'providers',
      'asked',
      'bid answers',
      'delivered',
      'sent',
      'CPU ms',
      'idle CPU ms',
      'post→running p50 ms',
    ],
    rows.map((r) => [
      r.providers,
      r.mode,
      r.bidAnswersPerJob,
      r.deliveredPerJob,
      r.sentPerJob,
      r.cpuMsPerJob,
      r.idleCpuMsPerJob,
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
        rows.push(simulate(n, canTake, silent, sample, n >= 10_000 ? 20 : 100))
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
