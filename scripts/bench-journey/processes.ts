/**
 * Section 2, second half: throughput with every node in its own process (the contract-db a
 * `dms contract-db run`, 9 noop providers in scripts/bench-node.ts, the requester a `dms run` with
 * jobs posted over its REST socket), and the CPU time each role spends per job.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { loadOrCreateKey } from '../../dms/keys.js'
import { CONCURRENCY, JOB_BODY, MiB, ROOT, TP_JOBS } from './common.js'
import type { Throughput } from './throughput.js'

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

/** CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat. */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS
}
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100

/** CPU milliseconds per job of each role over the measured window. */
export interface CpuPerJob {
  requester: number
  providers: number
  perProvider: number[]
  contractDb: number
  /** This process: the REST client posting jobs and following their logs. */
  client: number
  /**
   * The same without what each process burns idle (gossip heartbeats, pings, timers) over the
   * run's wall time, measured for IDLE_MS before it: on a loaded machine the run is slower, so
   * more idle time falls on each job; this part does not depend on that.
   */
  minusIdle: { requester: number; providers: number; contractDb: number }
}

/** How long each process's idle CPU is measured before the run. */
const IDLE_MS = 3000

/** With BENCH_PROFILE=<dir>: `--cpu-prof` for the child `name`, into <dir>/<name>/ (written at exit). */
const profile = (name: string): string[] =>
  process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(process.env.BENCH_PROFILE, name)}`] : []

/**
 * Throughput with every node in its own process, so the nodes share both cores as separate
 * machines would share nothing: the contract-db (`dms contract-db run`), 9 noop providers
 * (scripts/bench-node.ts) and the requester (`dms run`, jobs posted over its REST socket). Each
 * process's CPU time over the measured window is read from /proc, per job.
 */
export async function throughputProcesses(): Promise<
  Omit<Throughput, 'cpuMsPerJob'> & { cpuMsPerJob: CpuPerJob; failures: Record<string, number> }
> {
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-procs-'))
  const procs: Proc[] = []
  const { ApiClient } = await import('../../dms/api/client.js')
  try {
    await writeFile(join(dir, 'cdb.json'), JSON.stringify({ dataDir: join(dir, 'cdb'), oneHost: true }))
    const cdb = await startProc([
      ...profile('contract-db'),
      'bin/dms.js',
      'contract-db',
      'run',
      '--config',
      join(dir, 'cdb.json'),
    ])
    procs.push(cdb)
    const operator = new ApiClient(cdb.socket!)
    const approve = (peer: string) =>
      operator.ok('PUT', `/v1/contract-db/approved/${encodeURIComponent(peer)}`)
    // Disk for 64 jobs at the default quota (256 MiB) each: the noop executor writes nothing.
    const offer = { cpu: 64, memoryBytes: 64 * 1024 * MiB, diskBytes: 16 * 1024 * MiB, gpus: 0 }
    const prices = { perGiBMemoryHour: 10, perGiBDiskHour: 0, perGpuHour: 0, minJobPrice: 1 }
    const providers = await Promise.all(
      Array.from({ length: 9 }, async (_, i) => {
        const cfg = join(dir, `p${i}.json`)
        await approve(await peerIdOf(join(dir, `p${i}`)))
        await writeFile(
          cfg,
          JSON.stringify({
            dataDir: join(dir, `p${i}`),
            oneHost: true,
            api: false,
            bootstrap: cdb.addrs,
            provider: {
              contractDb: cdb.peerId,
              offer: { ...offer, prices: { ...prices, perCpuHour: 1000 + i } },
            },
          }),
        )
        const p = await startProc([
          ...profile(`provider-${i}`),
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
        bootstrap: [...cdb.addrs, ...providers.flatMap((p) => p.addrs)],
        requester: {
          contractDb: { peer: cdb.peerId, addrs: cdb.addrs },
          bidWindowMs: 3000,
          enoughBids: 3,
          // BENCH_BID_SAMPLE=n: ask n of the 9 providers per job (protocol.md, "Bid sample").
          ...(process.env.BENCH_BID_SAMPLE !== undefined
            ? { bidSample: Number(process.env.BENCH_BID_SAMPLE) }
            : {}),
        },
      }),
    )
    const reqPeer = await peerIdOf(join(dir, 'req'))
    await approve(reqPeer)
    await operator.ok('POST', `/v1/contract-db/accounts/${encodeURIComponent(reqPeer)}/credit`, {
      amount: 1_000_000_000_000,
    })
    const prof = process.env.BENCH_PROFILE_REQUESTER
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_REQUESTER}`]
      : profile('requester')
    const req = await startProc([...prof, 'bin/dms.js', 'run', '--config', reqCfg])
    procs.push(req)
    const api = new ApiClient(req.socket!)
    while ((await api.ok<{ bidTopicPeers: number }>('GET', '/v1/info')).bidTopicPeers < providers.length)
      await new Promise((r) => setTimeout(r, 100)) // start-up only: gossip mesh forming
    /** Posts a job and waits for its end on the logs stream (it ends with the final state). */
    const runOne = async (): Promise<string> => {
      const { id } = await api.ok<{ id: string }>('POST', '/v1/jobs', JOB_BODY)
      let text = ''
      await api.raw('GET', `/v1/jobs/${id}/logs?follow=true`, { onData: (c) => void (text += c.toString()) })
      const last = JSON.parse(text.trim().split('\n').at(-1) ?? '{}') as { state?: string }
      if (last.state === 'completed') return last.state
      // Why it did not complete, counted by error code.
      const job = await api.ok<{ error?: { code?: string } }>('GET', `/v1/jobs/${id}`).catch(() => undefined)
      const why = `${last.state ?? 'unknown'} ${job?.error?.code ?? ''}`.trim()
      failures[why] = (failures[why] ?? 0) + 1
      return last.state ?? 'unknown'
    }
    const failures: Record<string, number> = {}
    await runOne()
    for (const k of Object.keys(failures)) delete failures[k]
    let next = 0
    let failed = 0
    const roles = [cdb, req, ...providers]
    const idle0 = await Promise.all(roles.map((p) => cpuMs(p.child.pid!)))
    const idleT0 = performance.now()
    await new Promise((r) => setTimeout(r, IDLE_MS))
    const idleRate = (await Promise.all(roles.map((p) => cpuMs(p.child.pid!)))).map(
      (ms, i) => (ms - idle0[i]) / (performance.now() - idleT0),
    )
    const before = await Promise.all(roles.map((p) => cpuMs(p.child.pid!)))
    const client0 = process.cpuUsage()
    const t0 = performance.now()
    const worker = async () => {
      while (next < TP_JOBS) {
        next++
        if ((await runOne()) !== 'completed') failed++
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    const seconds = (performance.now() - t0) / 1000
    const client = process.cpuUsage(client0)
    const used = (await Promise.all(roles.map((p) => cpuMs(p.child.pid!)))).map(
      (ms, i) => (ms - before[i]) / TP_JOBS,
    )
    const perProvider = used.slice(2)
    const busy = used.map((ms, i) => ms - (idleRate[i] * seconds * 1000) / TP_JOBS)
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
    return {
      jobs: TP_JOBS,
      seconds,
      perSecond: TP_JOBS / seconds,
      failed,
      failures,
      cpuMsPerJob: {
        contractDb: used[0],
        requester: used[1],
        providers: perProvider.reduce((a, b) => a + b, 0),
        perProvider,
        client: (client.user + client.system) / 1000 / TP_JOBS,
        minusIdle: { contractDb: busy[0], requester: busy[1], providers: sum(busy.slice(2)) },
      },
    }
  } finally {
    // The nodes first, then the contract-db they settle with.
    for (const p of procs.slice(1)) p.child.kill('SIGTERM')
    await Promise.all(procs.slice(1).map((p) => p.exited))
    procs[0]?.child.kill('SIGTERM')
    await procs[0]?.exited
    await rm(dir, { recursive: true, force: true })
  }
}
