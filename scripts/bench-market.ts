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
 * (scripts/bench-market-host.ts) and the contract-db and requesters here. "CPU ms" is every
 * node's work for the job, in every process: the requester, the providers and the contract-db.
 * "delivered" counts envelopes delivered to a handler (a gossip publish counts once per
 * subscriber reached); "sent" (one process only) counts envelopes sealed and sent or published.
 * Writes bench/results/market-<time>.json.
 */
import '../actors/polyfill.js'
import { mkdirSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ActorSystem } from '../actors/system.js'
import { NoopExecutor } from '../dms/executor/noop.js'
import { ContractDbNode } from '../dms/contract-db/node.js'
import { DmsNode } from '../dms/node.js'
import { DEFAULT_BID_SAMPLE } from '../dms/orchestrator/bid-sample.js'
import { Host, Sends } from './bench-market-probes.js'
import { simulate, type SimRow } from './bench-market-sim.js'
import { parseJobSpec } from '../dms/orchestrator/job-spec.js'
import { W } from '../dms/protocol/behaviours.js'
import { BID_REQUEST_TOPIC } from '../dms/protocol/handles.js'
import type { JobUpdate } from '../dms/protocol/messages.js'
import {
  approve,
  jobReaches,
  startNetwork,
  TEST_IMAGE,
  TEST_PASSPHRASE,
  type TestNetwork,
} from '../test/helpers/network.js'

const MiB = 1024 * 1024
const ENOUGH_BIDS = 3
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : dflt
}
const SIZES = arg('providers', '10,100').split(',').map(Number)
const JOBS = Number(arg('jobs', '20'))
const ONLY = arg('only', 'real,sim').split(',')
/** Provider host processes (0: every node in this process). */
const PROCS = Number(arg('procs', '0'))

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

/** Posts one job on `node` and waits for it to end: ms from post to the provider's `running`, and in `bidding`. */
async function oneJob(node: DmsNode): Promise<{ toRunning: number; bidding: number }> {
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
  const h = job.record.history
  const b = h.findIndex((x) => x.state === 'bidding')
  return { toRunning: runningAt - t0, bidding: b >= 0 && b + 1 < h.length ? h[b + 1].at - h[b].at : NaN }
}

interface Row {
  providers: number
  /** Processes the nodes ran in (1: all in this one). */
  procs: number
  mode: 'everyone (bidSample 0)' | 'sample (default)'
  jobs: number
  failed: number
  bidAnswersPerJob: number
  deliveredPerJob: number
  sentPerJob: number
  cpuMsPerJob: number
  idleCpuMsPerJob: number
  postToRunningP50: number
  /** ms in the job's `bidding` state. */
  biddingP50: number
}

type Modes = ReadonlyArray<readonly [Row['mode'], DmsNode]>

/** Idle CPU of the whole network (gossip heartbeats, pings) per ms, to set against each job's. */
async function idleCpuPerMs(counters: () => Promise<Counters>): Promise<number> {
  const idle0 = await counters()
  const wall0 = Date.now()
  await sleep(3000)
  return ((await counters()).cpuMs - idle0.cpuMs) / (Date.now() - wall0)
}

/** `JOBS` sequential jobs through each mode's requester, with the counters read around them. */
async function measure(
  providers: number,
  modes: Modes,
  counters: () => Promise<Counters>,
  procs: number,
): Promise<Row[]> {
  const idlePerMs = await idleCpuPerMs(counters)
  const rows: Row[] = []
  for (const [mode, node] of modes) {
    // Every provider subscribed as this requester sees it (connections may have been re-dialled).
    await node.transport.waitForTopicPeers(BID_REQUEST_TOPIC, providers, {
      signal: AbortSignal.timeout(60_000),
    })
    // Warm-up (connections, image check caches); a failed one is tried again, and said.
    for (let tries = 1; ; tries++) {
      const ok = await oneJob(node).then(
        () => true,
        (err: unknown) => {
          const live = node.transport.topicSubscribers(BID_REQUEST_TOPIC).length
          console.error(
            `${providers} providers, ${mode}, warm-up: ${(err as Error).message}; ${live} live now`,
          )
          return false
        },
      )
      if (ok || tries === 3) break
    }
    const before = await counters()
    const wall0 = Date.now()
    const toRunning: number[] = []
    const bidding: number[] = []
    let failed = 0
    for (let i = 0; i < JOBS; i++) {
      try {
        const t = await oneJob(node)
        toRunning.push(t.toRunning)
        bidding.push(t.bidding)
      } catch (err) {
        // Counted, not hidden: e.g. NO_BIDS when the requester's providers were all disconnected.
        failed++
        console.error(`${providers} providers, ${mode}: ${(err as Error).message}`)
        await node.transport.waitForTopicPeers(BID_REQUEST_TOPIC, providers, {
          signal: AbortSignal.timeout(60_000),
        })
      }
    }
    const after = await counters()
    const wall = Date.now() - wall0
    rows.push({
      providers,
      procs,
      mode,
      jobs: JOBS,
      failed,
      bidAnswersPerJob: r1((after.bidAnswers - before.bidAnswers) / JOBS),
      deliveredPerJob: r1((after.delivered - before.delivered) / JOBS),
      sentPerJob: after.sent < 0 ? -1 : r1((after.sent - before.sent) / JOBS),
      cpuMsPerJob: r1((after.cpuMs - before.cpuMs) / JOBS),
      idleCpuMsPerJob: r1((idlePerMs * wall) / JOBS),
      postToRunningP50: p50(toRunning),
      biddingP50: p50(bidding),
    })
  }
  return rows
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
    return await measure(providers, modes, () => Promise.resolve(read(nodes, sends)), 1)
  } finally {
    await net.stop()
  }
}

/** The providers in `procs` host processes; the contract-db and both requesters in this one. */
async function realProcs(providers: number, procs: number): Promise<Row[]> {
  const root = await mkdtemp(join(tmpdir(), 'dms-market-'))
  const started: Array<{ stop(): Promise<void> }> = []
  const hosts: Host[] = []
  try {
    const contractDb = new ContractDbNode(
      { dataDir: join(root, 'contract-db'), oneHost: true },
      { passphrase: TEST_PASSPHRASE },
    )
    await contractDb.start()
    started.push(contractDb)
    const cdbAddrs = contractDb.addrs()
    const per = Math.ceil(providers / procs)
    for (let first = 0; first < providers; first += per)
      hosts.push(
        new Host([
          'scripts/bench-market-host.ts',
          root,
          contractDb.peerId,
          JSON.stringify(cdbAddrs),
          String(Math.min(per, providers - first)),
          String(first),
        ]),
      )
    const ready = await Promise.all(
      hosts.map((h) => h.next<{ ready: Array<{ peer: string; addrs: string[] }> }>()),
    )
    const peers = ready.flatMap((r) => r.ready)
    for (const p of peers) await contractDb.service.approve(p.peer)
    const approved = await Promise.all(hosts.map((h) => h.ask<{ approved: boolean }>('approved')))
    if (!approved.every((a) => a.approved)) throw new Error('a provider got no approval credential')
    const requester = async (name: string, bidSample?: number) => {
      const node = new DmsNode(
        {
          dataDir: join(root, name),
          oneHost: true,
          bootstrap: [...cdbAddrs, ...peers.flatMap((p) => p.addrs)],
          requester: {
            contractDb: { peer: contractDb.peerId, addrs: cdbAddrs },
            bidWindowMs: 3000,
            enoughBids: ENOUGH_BIDS,
            ...(bidSample === undefined ? {} : { bidSample }),
          },
        },
        { passphrase: TEST_PASSPHRASE },
      )
      await node.start()
      started.push(node)
      await approve(contractDb, node)
      await contractDb.service.credit(node.peerId, 1_000_000_000_000)
      return node
    }
    const everyone = await requester('requester-everyone', 0)
    const sampled = await requester('requester')
    const here = [contractDb, everyone, sampled]
    const counters = async (): Promise<Counters> => {
      const u = process.cpuUsage()
      const stats = await Promise.all(hosts.map((h) => h.ask<Omit<Counters, 'sent'>>('stats')))
      return {
        cpuMs: (u.user + u.system) / 1000 + stats.reduce((a, x) => a + x.cpuMs, 0),
        delivered:
          here.reduce((a, n) => a + n.system.metrics().delivered, 0) +
          stats.reduce((a, x) => a + x.delivered, 0),
        bidAnswers: stats.reduce((a, x) => a + x.bidAnswers, 0),
        sent: -1,
      }
    }
    const modes: Modes = [
      ['everyone (bidSample 0)', everyone],
      ['sample (default)', sampled],
    ]
    return await measure(providers, modes, counters, procs + 1)
  } finally {
    for (const h of hosts) {
      h.child.stdin!.write('stop\n')
      await new Promise((r) => h.child.once('exit', r))
    }
    for (const n of started.reverse()) await n.stop()
    await rm(root, { recursive: true, force: true })
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
    const run = () => (PROCS > 0 ? realProcs(n, PROCS) : real(n))
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
