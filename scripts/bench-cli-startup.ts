/**
 * Start-up time of `dms --help` and `dms job list --help` (the built CLI) against a bare
 * `node -e ''`, N runs each, interleaved: prints the median and minimum wall time and the load.
 * Another checkout's bin/dms.js may be given to compare (e.g. the CLI before a change).
 * Run: node --import tsx scripts/bench-cli-startup.ts [N] [other/bin/dms.js]
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { loadavg } from 'node:os'

const N = Number(process.argv[2] ?? 10)
const BIN = join(import.meta.dirname, '..', 'bin', 'dms.js')
const OTHER = process.argv[3]
const cases: Array<[string, string[]]> = [
  ['node -e ""', ['-e', '']],
  ['dms --help', [BIN, '--help']],
  ['dms job list --help', [BIN, 'job', 'list', '--help']],
  ...(OTHER !== undefined
    ? ([
        ['other: dms --help', [OTHER, '--help']],
        ['other: dms job list --help', [OTHER, 'job', 'list', '--help']],
      ] as Array<[string, string[]]>)
    : []),
]
const runs: Record<string, number[]> = Object.fromEntries(cases.map(([name]) => [name, []]))
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')
const before = load()
for (let i = 0; i < N; i++)
  for (const [name, args] of cases) {
    const t0 = process.hrtime.bigint()
    const r = spawnSync(process.execPath, args, { stdio: 'ignore' })
    if (r.status !== 0) throw new Error(`${name} exited ${r.status}`)
    runs[name].push(Number(process.hrtime.bigint() - t0) / 1e6)
  }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log(`load average ${before} before, ${load()} after; ${N} runs each`)
for (const [name, xs] of Object.entries(runs))
  console.log(`${name.padEnd(28)} median ${median(xs).toFixed(0)} ms, min ${Math.min(...xs).toFixed(0)} ms`)
