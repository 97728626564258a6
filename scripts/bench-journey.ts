/**
 * The product's numbers in one run (issue 9): job latency by phase, throughput, scale and idle
 * memory, printed as tables and written as JSON under bench/results/.
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-journey.ts [--quick]
 *   env: BENCH_JOBS (latency jobs per setting, default 20), BENCH_THROUGHPUT_JOBS (default 300),
 *        BENCH_CONCURRENCY (default 50), BENCH_SCALE (node counts, default 10,50,100)
 *
 * Every node is real (libp2p on 127.0.0.1, level in a temp dir, sealed keys) and in this one
 * process except the idle-memory node, which is its own `dms run` process. "noop" is the
 * NoopExecutor (benchmarks and tests only); "docker" is the real DockerExecutor.
 *
 * Targets: orchestration overhead (post -> container running, minus a raw `docker run -d`) <= 150 ms
 * p50; >= 50 jobs/s on 10 nodes; 100-node p50 <= 1.5x the 10-node p50; idle node RSS <= 80 MB.
 */
import '../actors/polyfill.js'
import { execFile as execFileCb, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { NoopExecutor } from '../dms/executor/noop.js'
import { loadOrCreateKey } from '../dms/keys.js'
import type { Executor } from '../dms/executor/executor.js'
import type { JobUpdate } from '../dms/protocol/messages.js'
import { parseJobSpec } from '../dms/orchestrator/job-spec.js'
import type { StoredJob } from '../dms/orchestrator/orchestrator.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../test/helpers/network.js'

const execFile = promisify(execFileCb)
const QUICK = process.argv.includes('--quick')
const JOBS = Number(process.env.BENCH_JOBS ?? (QUICK ? 5 : 20))
const TP_JOBS = Number(process.env.BENCH_THROUGHPUT_JOBS ?? (QUICK ? 60 : 300))
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50)
const SCALE = (process.env.BENCH_SCALE ?? (QUICK ? '10,20' : '10,50,100')).split(',').map(Number)
const MiB = 1024 * 1024
/** Sections to run (all by default): latency, throughput, scale, memory. */
const ONLY = new Set((process.env.BENCH_ONLY ?? 'latency,throughput,scale,memory').split(','))
const ROOT = join(import.meta.dirname, '..')

// Bounded: whatever happens, the process ends.
setTimeout(() => {
  console.error('bench-journey: 20 minutes passed, exiting')
  process.exit(3)
}, 20 * 60_000).unref()

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '-')
const results: Record<string, unknown> = {
  at: new Date().toISOString(),
  machine: { cores: cpus().length, model: cpus()[0]?.model },
}

function table(title: string, head: string[], rows: Array<Array<string | number>>): void {
  const all = [head, ...rows.map((r) => r.map(String))]
  const width = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)))
  console.log(`\n${title}\n`)
  for (const [n, r] of all.entries()) {
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(width[i]) : c.padStart(width[i]))).join('  '))
    if (n === 0) console.log(width.map((w) => '-'.repeat(w)).join('  '))
  }
}

async function network(providers: number, executor: Executor): Promise<TestNetwork> {
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

const spec = parseJobSpec({
  image: TEST_IMAGE,
  command: ['true'],
  resources: { cpu: 0.1, memory: '16MiB' },
  maxDuration: 60,
  maxPrice: 1_000_000,
})

interface Timed {
  total: number
  /** ms from post to the provider's `running` update. */
  toRunning: number
  phases: Record<string, number>
}

/** Posts one job and waits for it to end; the phases are the gaps between its states. */
async function oneJob(net: TestNetwork): Promise<Timed> {
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

async function latency(kind: 'noop' | 'docker'): Promise<Timed[]> {
  const net = await network(20, kind === 'noop' ? new NoopExecutor() : (undefined as unknown as Executor))
  try {
    await oneJob(net) // warm-up: connections, image metadata
    const out: Timed[] = []
    for (let i = 0; i < JOBS; i++) out.push(await oneJob(net))
    return out
  } finally {
    await net.stop()
  }
}

async function rawDockerStart(n: number): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    const { stdout } = await execFile('docker', ['run', '-d', '--network', 'none', TEST_IMAGE, 'sleep', '5'])
    out.push(performance.now() - t0)
    await execFile('docker', ['rm', '-f', stdout.trim()])
  }
  return out
}

async function throughput(): Promise<{ jobs: number; seconds: number; perSecond: number; failed: number }> {
  const net = await network(9, new NoopExecutor()) // 9 providers + requester = 10 nodes (+ contract-db)
  try {
    await oneJob(net)
    let next = 0
    let failed = 0
    const t0 = performance.now()
    const worker = async () => {
      while (next < TP_JOBS) {
        next++
        const posted = await net.requester.orchestrator!.post(spec)
        const job = await jobReaches(net.requester, posted.record.id)
        if (job.state !== 'completed') failed++
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    const seconds = (performance.now() - t0) / 1000
    return { jobs: TP_JOBS, seconds, perSecond: TP_JOBS / seconds, failed }
  } finally {
    await net.stop()
  }
}

interface Proc {
  child: ChildProcess
  peerId: string
  addrs: string[]
  socket: string | null
  exited: Promise<unknown>
}

/**
 * Creates the node key of `dataDir` (passphrase 'bench') and returns its peer id, so the
 * contract-db approves the node before it starts: it then has its approval credential when ready.
 */
async function peerIdOf(dataDir: string): Promise<string> {
  const { key } = await loadOrCreateKey(dataDir, () => Promise.resolve('bench'))
  return peerIdFromPrivateKey(privateKeyFromRaw(key.libp2pRaw())).toString()
}

/** Starts a node process and resolves with its ready line. */
function startProc(args: string[]): Promise<Proc> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, DMS_PASSPHRASE: 'bench', DMS_LOG_LEVEL: 'warn' },
  })
  const exited = new Promise((r) => child.once('exit', r))
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}) before ready`)))
    createInterface({ input: child.stdout }).on('line', (l) => {
      try {
        const r = JSON.parse(l) as { event?: string; peerId: string; addrs: string[]; socket: string | null }
        if (r.event === 'ready')
          resolve({ child, peerId: r.peerId, addrs: r.addrs, socket: r.socket, exited })
      } catch {
        /* not the ready line */
      }
    })
  })
}

/**
 * Throughput with every node in its own process, so the nodes share both cores as separate
 * machines would share nothing: the contract-db in this process, 9 noop providers
 * (scripts/bench-node.ts) and the requester (`dms run`, jobs posted over its REST socket).
 */
async function throughputProcesses(): Promise<{
  jobs: number
  seconds: number
  perSecond: number
  failed: number
}> {
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-procs-'))
  const procs: Proc[] = []
  const { ContractDbNode } = await import('../dms/contract-db/node.js')
  const { ApiClient } = await import('../dms/api/client.js')
  const cdb = new ContractDbNode(
    { dataDir: join(dir, 'cdb'), oneHost: true, socket: false },
    { passphrase: () => Promise.resolve('bench') },
  )
  await cdb.start()
  try {
    // Disk for 64 jobs at the default quota (256 MiB) each: the noop executor writes nothing.
    const offer = { cpu: 64, memoryBytes: 64 * 1024 * MiB, diskBytes: 16 * 1024 * MiB, gpus: 0 }
    const prices = { perGiBMemoryHour: 10, perGiBDiskHour: 0, perGpuHour: 0, minJobPrice: 1 }
    const providers = await Promise.all(
      Array.from({ length: 9 }, async (_, i) => {
        const cfg = join(dir, `p${i}.json`)
        await cdb.service.approve(await peerIdOf(join(dir, `p${i}`)))
        await writeFile(
          cfg,
          JSON.stringify({
            dataDir: join(dir, `p${i}`),
            oneHost: true,
            api: false,
            bootstrap: cdb.addrs(),
            provider: {
              contractDb: cdb.peerId,
              offer: { ...offer, prices: { ...prices, perCpuHour: 1000 + i } },
            },
          }),
        )
        const p = await startProc([
          '--import',
          'tsx',
          '--import',
          './actors/polyfill.ts',
          'scripts/bench-node.ts',
          cfg,
        ])
        procs.push(p)
        return p
      }),
    )
    const reqCfg = join(dir, 'req.json')
    await writeFile(
      reqCfg,
      JSON.stringify({
        dataDir: join(dir, 'req'),
        oneHost: true,
        bootstrap: [...cdb.addrs(), ...providers.flatMap((p) => p.addrs)],
        requester: { contractDb: { peer: cdb.peerId, addrs: cdb.addrs() }, bidWindowMs: 3000, enoughBids: 3 },
      }),
    )
    const prof = process.env.BENCH_PROFILE_REQUESTER
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_REQUESTER}`]
      : []
    const reqPeer = await peerIdOf(join(dir, 'req'))
    await cdb.service.approve(reqPeer)
    await cdb.service.credit(reqPeer, 1_000_000_000_000)
    const req = await startProc([...prof, 'bin/dms.js', 'run', '--config', reqCfg])
    procs.push(req)
    const api = new ApiClient(req.socket!)
    while ((await api.ok<{ bidTopicPeers: number }>('GET', '/v1/info')).bidTopicPeers < providers.length)
      await new Promise((r) => setTimeout(r, 100)) // start-up only: gossip mesh forming
    const body = {
      image: TEST_IMAGE,
      command: ['true'],
      resources: { cpu: 0.1, memory: '16MiB' },
      maxDuration: 60,
      maxPrice: 1_000_000,
    }
    /** Posts a job and waits for its end on the logs stream (it ends with the final state). */
    const runOne = async (): Promise<string> => {
      const { id } = await api.ok<{ id: string }>('POST', '/v1/jobs', body)
      let text = ''
      await api.raw('GET', `/v1/jobs/${id}/logs?follow=true`, { onData: (c) => void (text += c.toString()) })
      const last = JSON.parse(text.trim().split('\n').at(-1) ?? '{}') as { state?: string }
      return last.state ?? 'unknown'
    }
    await runOne()
    let next = 0
    let failed = 0
    const t0 = performance.now()
    const worker = async () => {
      while (next < TP_JOBS) {
        next++
        if ((await runOne()) !== 'completed') failed++
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    const seconds = (performance.now() - t0) / 1000
    return { jobs: TP_JOBS, seconds, perSecond: TP_JOBS / seconds, failed }
  } finally {
    for (const p of procs) p.child.kill('SIGTERM')
    await Promise.all(procs.map((p) => p.exited))
    await cdb.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

async function scale(nodes: number): Promise<number[]> {
  const net = await network(nodes - 1, new NoopExecutor())
  try {
    await oneJob(net)
    const out: number[] = []
    for (let i = 0; i < JOBS; i++) out.push((await oneJob(net)).total)
    return out
  } finally {
    await net.stop()
  }
}

/** RSS of an idle provider node in its own process, 5 s after it is ready. */
async function idleRss(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-rss-'))
  const cfg = join(dir, 'node.json')
  await writeFile(
    cfg,
    JSON.stringify({
      dataDir: join(dir, 'node'),
      oneHost: true,
      provider: {
        // No contract-db runs here: an idle provider never needs one.
        contractDb: '12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN',
        offer: {
          cpu: 1,
          memoryBytes: 512 * MiB,
          diskBytes: 1024 * MiB,
          gpus: 0,
          prices: { perCpuHour: 1, perGiBMemoryHour: 1, perGiBDiskHour: 1, perGpuHour: 1, minJobPrice: 1 },
        },
      },
    }),
  )
  const child = spawn(process.execPath, [join(ROOT, 'bin/dms.js'), 'run', '--config', cfg], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, DMS_PASSPHRASE: 'bench', DMS_LOG_LEVEL: 'warn' },
  })
  const exited = new Promise((r) => child.once('exit', r))
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`dms run exited (${code})`)))
      createInterface({ input: child.stdout }).on('line', (l) => l.includes('"ready"') && resolve())
    })
    await new Promise((r) => setTimeout(r, 5000)) // idle on purpose: this is what is measured
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8')
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024
  } finally {
    child.kill('SIGTERM')
    await exited
    await rm(dir, { recursive: true, force: true })
  }
}

function phaseTable(name: string, runs: Timed[]): Record<string, number> {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.phases)))]
  const p50s: Record<string, number> = {}
  for (const k of keys)
    p50s[k] = pct(
      runs.map((r) => r.phases[k] ?? 0),
      50,
    )
  table(
    `1. one job by phase, ${name} executor, 20 providers, ${runs.length} jobs (ms, p50)`,
    ['phase', 'p50'],
    [
      ...keys.map((k) => [k, f0(p50s[k])]),
      [
        'post -> running',
        f0(
          pct(
            runs.map((r) => r.toRunning),
            50,
          ),
        ),
      ],
      [
        'total',
        f0(
          pct(
            runs.map((r) => r.total),
            50,
          ),
        ),
      ],
    ],
  )
  return p50s
}

execFileSync('bash', [join(ROOT, 'scripts/build-test-image.sh')], { stdio: 'ignore' })
console.log(`bench-journey${QUICK ? ' (quick)' : ''}: ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}`)

async function latencySection(): Promise<void> {
  const noop = await latency('noop')
  const docker = await latency('docker')
  const raw = await rawDockerStart(JOBS)
  const noopP50 = phaseTable('noop', noop)
  const dockerP50 = phaseTable('docker', docker)
  const toRunning = pct(
    docker.map((r) => r.toRunning),
    50,
  )
  const rawP50 = pct(raw, 50)
  table(
    '   orchestration overhead (docker)',
    ['measure', 'p50 ms'],
    [
      ['post -> container running', f0(toRunning)],
      ['raw docker run -d (same image)', f0(rawP50)],
      ['overhead (target <= 150)', f0(toRunning - rawP50)],
    ],
  )
  results.latency = {
    noop: {
      phasesP50: noopP50,
      totalP50: pct(
        noop.map((r) => r.total),
        50,
      ),
    },
    docker: {
      phasesP50: dockerP50,
      totalP50: pct(
        docker.map((r) => r.total),
        50,
      ),
      postToRunningP50: toRunning,
    },
    rawDockerRunP50: rawP50,
    overheadP50: toRunning - rawP50,
  }
}

async function throughputSection(): Promise<void> {
  const tp = await throughput()
  const procs = await throughputProcesses()
  table(
    `2. throughput, noop executor, 10 nodes, ${CONCURRENCY} in flight`,
    ['nodes', 'jobs', 'failed', 'seconds', 'jobs/s (target >= 50)'],
    [
      ['in this one process', tp.jobs, tp.failed, tp.seconds.toFixed(1), tp.perSecond.toFixed(1)],
      [
        'each in its own process',
        procs.jobs,
        procs.failed,
        procs.seconds.toFixed(1),
        procs.perSecond.toFixed(1),
      ],
    ],
  )
  results.throughput = { inProcess: tp, processes: procs }
}

async function scaleSection(): Promise<void> {
  const rows: Array<Array<string | number>> = []
  const out: Record<string, { p50: number; p99: number }> = {}
  for (const n of SCALE) {
    const xs = await scale(n)
    out[n] = { p50: pct(xs, 50), p99: pct(xs, 99) }
    rows.push([n, f0(pct(xs, 50)), f0(pct(xs, 99))])
  }
  const first = out[SCALE[0]].p50
  const last = out[SCALE.at(-1)!].p50
  table('3. scale, noop executor, job latency (ms)', ['nodes', 'p50', 'p99'], rows)
  console.log(
    `\n   ${SCALE.at(-1)}-node p50 / ${SCALE[0]}-node p50 = ${(last / first).toFixed(2)} (target <= 1.5)`,
  )
  results.scale = out
}

async function memorySection(): Promise<void> {
  const rss = await idleRss()
  table('4. memory', ['measure', 'MB'], [['idle provider node RSS (target <= 80)', rss.toFixed(1)]])
  results.idleRssMB = rss
}

if (ONLY.has('latency')) await latencySection()
if (ONLY.has('throughput')) await throughputSection()
if (ONLY.has('scale')) await scaleSection()
if (ONLY.has('memory')) await memorySection()

mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
const file = join(ROOT, 'bench/results', `journey-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
console.log(`\nwrote ${file}`)
process.exit(0)
