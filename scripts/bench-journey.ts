/**
 * The product's numbers in one run (issue 9): job latency by phase, throughput, scale and idle
 * memory, printed as tables and written as JSON under bench/results/. One file per section in
 * scripts/bench-journey/.
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-journey.ts [--quick]
 *   env: BENCH_JOBS (latency jobs per setting, default 20), BENCH_THROUGHPUT_JOBS (default 300),
 *        BENCH_CONCURRENCY (default 50), BENCH_SCALE (node counts, default 10,50,100),
 *        BENCH_ONLY (sections, default latency,throughput,ops,scale,memory), BENCH_PROFILE (a
 *        directory: CPU profiles of every process of the throughput run), BENCH_BID_SAMPLE (the
 *        requester's `bidSample` in the throughput run with each node in its own process)
 *
 * Every node is real (libp2p on 127.0.0.1, level in a temp dir, sealed keys) and in this one
 * process except the idle-memory node, which is its own `dms run` process. "noop" is the
 * NoopExecutor (benchmarks and tests only); "docker" is the real DockerExecutor.
 *
 * Targets: orchestration overhead (post -> container running, minus a raw `docker run -d`) <= 150 ms
 * p50; >= 50 jobs/s on 10 nodes; 100-node p50 <= 1.5x the 10-node p50; idle node RSS <= 80 MB.
 */
import '../actors/polyfill.js'
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { QUICK, results, ROOT } from './bench-journey/common.js'
import { latencySection } from './bench-journey/latency.js'
import { memorySection } from './bench-journey/memory.js'
import { opsSection } from './bench-journey/ops.js'
import { scaleSection } from './bench-journey/scale.js'
import { throughputSection } from './bench-journey/throughput.js'

/** Sections to run (all by default): latency, throughput, ops, scale, memory. */
const ONLY = new Set((process.env.BENCH_ONLY ?? 'latency,throughput,ops,scale,memory').split(','))

// Bounded: whatever happens, the process ends.
setTimeout(() => {
  console.error('bench-journey: 20 minutes passed, exiting')
  process.exit(3)
}, 20 * 60_000).unref()

execFileSync('bash', [join(ROOT, 'scripts/build-test-image.sh')], { stdio: 'ignore' })
console.log(`bench-journey${QUICK ? ' (quick)' : ''}: ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}`)

if (ONLY.has('latency')) await latencySection()
if (ONLY.has('throughput')) await throughputSection()
if (ONLY.has('ops')) await opsSection()
if (ONLY.has('scale')) await scaleSection()
if (ONLY.has('memory')) await memorySection()

mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
const file = join(ROOT, 'bench/results', `journey-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
console.log(`\nwrote ${file}`)
process.exit(0)
