/**
 * Start-up time of `dms --help` (the built CLI) against a bare `node -e ''`, N runs each,
 * interleaved: prints the median and minimum wall time. Run: node --import tsx scripts/bench-cli-startup.ts [N]
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { loadavg } from 'node:os'

const N = Number(process.argv[2] ?? 10)
const BIN = join(import.meta.dirname, '..', 'bin', 'dms.js')
const runs: Record<string, number[]> = { 'node -e ""': [], 'dms --help': [] }
for (let i = 0; i < N; i++)
  for (const [name, args] of [
    ['node -e ""', ['-e', '']],
    ['dms --help', [BIN, '--help']],
  ] as const) {
    const t0 = process.hrtime.bigint()
    const r = spawnSync(process.execPath, args, { stdio: 'ignore' })
    if (r.status !== 0) throw new Error(`${name} exited ${r.status}`)
    runs[name].push(Number(process.hrtime.bigint() - t0) / 1e6)
  }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, ${N} runs each`,
)
for (const [name, xs] of Object.entries(runs))
  console.log(`${name.padEnd(12)} median ${median(xs).toFixed(0)} ms, min ${Math.min(...xs).toFixed(0)} ms`)
