/**
 * Overhead of one trivial run (`sh -c :`) through DockerExecutor against `docker run --rm`, and
 * the same run with a disk quota (loop-mounted /outputs; as root only).
 * Runs are interleaved (alternating which goes first) so both see the same machine load.
 *
 *   node --import tsx scripts/bench-executor.ts      # env: BENCH_N (default 20), DMS_TEST_IMAGE
 */
import { execFile as execFileCb, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { container } from '../test/helpers/workload.js'
import { DockerExecutor } from '../dms/executor/docker/docker-executor.js'
import { silentLogger } from '../dms/log.js'

const execFile = promisify(execFileCb)
const N = Number(process.env.BENCH_N ?? 20)
const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
/** The disk quota needs root (loop mounts). */
const QUOTA = process.getuid?.() === 0

execFileSync('bash', [join(import.meta.dirname, 'build-test-image.sh')], { stdio: 'inherit' })
const workDir = mkdtempSync(join(tmpdir(), 'dms-bench-executor-'))
const executor = new DockerExecutor({ log: silentLogger }, { workDir })

async function viaExecutor(i: number, diskBytes = 0): Promise<number> {
  const t0 = performance.now()
  const result = await executor.run({
    jobId: 'bench',
    allocationId: `bench-${process.pid}-${i}`,
    workload: container({ image: IMAGE, command: ['sh', '-c', ':'], cpu: 1, memoryBytes: 64 * 1024 * 1024 }),
    timeoutSeconds: 30,
    diskBytes,
  })
  if (result.status !== 'completed')
    throw new Error(`executor run ${i}: ${result.status} ${result.reason ?? ''}`)
  return performance.now() - t0
}

async function viaCli(): Promise<number> {
  const t0 = performance.now()
  await execFile('docker', ['run', '--rm', IMAGE, 'sh', '-c', ':'])
  return performance.now() - t0
}

function stats(ms: number[]): { p50: number; mean: number; min: number; max: number } {
  const sorted = [...ms].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const p50 = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
  return { p50, mean: ms.reduce((a, b) => a + b, 0) / ms.length, min: sorted[0], max: sorted.at(-1)! }
}

try {
  await viaExecutor(-1) // warm-up: first connection, image metadata cache
  await viaCli()
  const executorMs: number[] = []
  const quotaMs: number[] = []
  const cliMs: number[] = []
  for (let i = 0; i < N; i++) {
    if (i % 2 === 0) {
      executorMs.push(await viaExecutor(i))
      cliMs.push(await viaCli())
      if (QUOTA) quotaMs.push(await viaExecutor(N + i, 64 * 1024 * 1024))
    } else {
      if (QUOTA) quotaMs.push(await viaExecutor(N + i, 64 * 1024 * 1024))
      cliMs.push(await viaCli())
      executorMs.push(await viaExecutor(i))
    }
  }
  const e = stats(executorMs)
  const c = stats(cliMs)
  const q = QUOTA ? stats(quotaMs) : undefined
  const f = (x: number): string => x.toFixed(0).padStart(7)
  console.log(`\n${N} runs of \`sh -c :\` in ${IMAGE}, interleaved (ms)\n`)
  console.log(`${'runner'.padEnd(26)}    p50    mean     min     max`)
  console.log(`${'DockerExecutor.run'.padEnd(26)}${f(e.p50)} ${f(e.mean)} ${f(e.min)} ${f(e.max)}`)
  if (q !== undefined) {
    console.log(`${'  + 64 MiB disk quota'.padEnd(26)}${f(q.p50)} ${f(q.mean)} ${f(q.min)} ${f(q.max)}`)
  }
  console.log(`${'docker run --rm (CLI)'.padEnd(26)}${f(c.p50)} ${f(c.mean)} ${f(c.min)} ${f(c.max)}`)
  console.log(`\nexecutor / CLI: p50 ${(e.p50 / c.p50).toFixed(2)}, mean ${(e.mean / c.mean).toFixed(2)}`)
  if (q !== undefined) console.log(`with quota / CLI: p50 ${(q.p50 / c.p50).toFixed(2)}`)
} finally {
  rmSync(workDir, { recursive: true, force: true })
}
