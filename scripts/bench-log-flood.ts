/**
 * CPU a log flood costs the provider: a 0.1-CPU container running `yes` (and `yes >&2`) for
 * BENCH_SECONDS (default 20) through DockerExecutor with the provider's 256 KiB log cap, and the
 * CPU seconds this process (the executor, as inside the provider) used meanwhile.
 *
 *   node --import tsx scripts/bench-log-flood.ts     # env: BENCH_SECONDS, BENCH_RUNS (default 2)
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { container } from '../test/helpers/workload.js'
import { DockerExecutor } from '../dms/executor/docker/docker-executor.js'
import { silentLogger } from '../dms/log.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20)
const RUNS = Number(process.env.BENCH_RUNS ?? 2)
const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'

execFileSync('bash', [join(import.meta.dirname, 'build-test-image.sh')], { stdio: 'inherit' })
const workDir = mkdtempSync(join(tmpdir(), 'dms-bench-logflood-'))
// The provider's settings (dms/node.ts): 256 KiB of each stream kept.
const executor = new DockerExecutor({ log: silentLogger }, { workDir, maxLogBytes: 256 * 1024 })

/** CPU seconds of dockerd so far (utime + stime from /proc), or undefined when not readable. */
function dockerdCpu(): number | undefined {
  try {
    const pid = execFileSync('pidof', ['dockerd']).toString().trim().split(' ')[0]
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(f[11]) + Number(f[12])) / 100
  } catch {
    return undefined
  }
}

try {
  console.log(
    `\nlog flood: ${RUNS} runs of ${SECONDS} s, 0.1 CPU, \`yes\` on stdout and stderr, cap 256 KiB\n`,
  )
  console.log('run  status     wall s  node CPU s  per wall s  dockerd CPU s  truncated  stdout KiB  load')
  for (let i = 0; i < RUNS; i++) {
    const cpu0 = process.cpuUsage()
    const d0 = dockerdCpu()
    const t0 = performance.now()
    const result = await executor.run({
      jobId: 'bench',
      allocationId: `logflood-${process.pid}-${i}`,
      workload: container({
        image: IMAGE,
        command: ['sh', '-c', 'yes >&2 & exec yes'],
        cpu: 0.1,
        memoryBytes: 64 * 1024 * 1024,
      }),
      timeoutSeconds: SECONDS,
    })
    const wall = (performance.now() - t0) / 1000
    const used = process.cpuUsage(cpu0)
    const cpuSeconds = (used.user + used.system) / 1e6
    const d1 = dockerdCpu()
    const dockerd = d0 === undefined || d1 === undefined ? 'n/a' : (d1 - d0).toFixed(2)
    console.log(
      `${String(i).padEnd(5)}${result.status.padEnd(11)}${wall.toFixed(1).padStart(6)}` +
        `${cpuSeconds.toFixed(2).padStart(12)}${(cpuSeconds / wall).toFixed(3).padStart(12)}` +
        `${dockerd.padStart(15)}${String(result.truncated).padStart(11)}` +
        `${(result.stdout.length / 1024).toFixed(0).padStart(12)}  ${loadavg()[0].toFixed(1)}`,
    )
  }
} finally {
  rmSync(workDir, { recursive: true, force: true })
}
