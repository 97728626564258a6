/** Section 1: one job by phase (noop and Docker executors) beside a raw `docker run -d`. */
import { execFile as execFileCb } from 'node:child_process'
import { promisify } from 'node:util'
import { NoopExecutor } from '../../dms/executor/noop.js'
import type { Engine } from '../../dms/executor/engine.js'
import { TEST_IMAGE } from '../../test/helpers/network.js'
import { startCpuLimit } from '../../dms/executor/docker/cpu-limit.js'
import { f0, JOB_BODY, JOBS, network, oneJob, pct, results, table, type Timed } from './common.js'

const execFile = promisify(execFileCb)

async function latency(kind: 'noop' | 'docker'): Promise<Timed[]> {
  const net = await network(20, kind === 'noop' ? new NoopExecutor() : (undefined as unknown as Engine))
  try {
    await oneJob(net) // warm-up: connections, image metadata
    const out: Timed[] = []
    for (let i = 0; i < JOBS; i++) out.push(await oneJob(net))
    return out
  } finally {
    await net.stop()
  }
}

/** `docker run -d`, with no limits (`limits` empty) or the benchmark job's own CPU and memory. */
async function rawDockerRun(limits: string[]): Promise<number> {
  const t0 = performance.now()
  const { stdout } = await execFile('docker', [
    'run',
    '-d',
    '--network',
    'none',
    ...limits,
    TEST_IMAGE,
    'sleep',
    '5',
  ])
  const ms = performance.now() - t0
  await execFile('docker', ['rm', '-f', stdout.trim()])
  return ms
}

/**
 * The job's limits as the executor starts its container: 0.1 CPU over the start period
 * (dms/executor/docker/cpu-limit.ts), 16 MiB.
 */
const start = startCpuLimit(JOB_BODY.resources.cpu)
const LIMITS = [
  '--cpu-period',
  String(start.CpuPeriod),
  '--cpu-quota',
  String(start.CpuQuota),
  '--memory',
  '16m',
]

/** Raw starts, interleaved: without limits, and under the job's limits as the executor sets them. */
async function rawDockerStart(n: number): Promise<{ plain: number[]; limited: number[] }> {
  const plain: number[] = []
  const limited: number[] = []
  for (let i = 0; i < n; i++) {
    plain.push(await rawDockerRun([]))
    limited.push(await rawDockerRun(LIMITS))
  }
  return { plain, limited }
}

function phaseTable(name: string, runs: Timed[]): Record<string, number> {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.phases)))]
  const p50s: Record<string, number> = {}
  for (const k of keys)
    p50s[k] = pct(
      runs.map((r) => r.phases[k] ?? 0),
      50,
    )
  const p50 = (f: (r: Timed) => number) => f0(pct(runs.map(f), 50))
  table(
    `1. one job by phase, ${name} executor, 20 providers, ${runs.length} jobs (ms, p50)`,
    ['phase', 'p50'],
    [
      ...keys.map((k) => [k, f0(p50s[k])]),
      ['post -> running', p50((r) => r.toRunning)],
      ['total', p50((r) => r.total)],
    ],
  )
  return p50s
}

export async function latencySection(): Promise<void> {
  const noop = await latency('noop')
  const docker = await latency('docker')
  const raw = await rawDockerStart(JOBS)
  const noopP50 = phaseTable('noop', noop)
  const dockerP50 = phaseTable('docker', docker)
  const toRunning = pct(
    docker.map((r) => r.toRunning),
    50,
  )
  const rawP50 = pct(raw.plain, 50)
  const limitedP50 = pct(raw.limited, 50)
  table(
    '   orchestration overhead (docker)',
    ['measure', 'p50 ms'],
    [
      ['post -> container running', f0(toRunning)],
      ['raw docker run -d (same image)', f0(rawP50)],
      ['overhead (target <= 75)', f0(toRunning - rawP50)],
      [`raw docker run -d ${LIMITS.join(' ')}`, f0(limitedP50)],
      ['overhead against it', f0(toRunning - limitedP50)],
    ],
  )
  const totalP50 = (runs: Timed[]) =>
    pct(
      runs.map((r) => r.total),
      50,
    )
  results.latency = {
    noop: { phasesP50: noopP50, totalP50: totalP50(noop) },
    docker: { phasesP50: dockerP50, totalP50: totalP50(docker), postToRunningP50: toRunning },
    rawDockerRunP50: rawP50,
    overheadP50: toRunning - rawP50,
    rawDockerRunLimitedP50: limitedP50,
  }
}
