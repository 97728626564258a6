/**
 * Idle memory of the three long-running processes, each started as a user starts it, through
 * bin/dms.js in its own process: a contract-db (`dms contract-db run`), a provider node and a
 * requester-only node (`dms run --config`, both naming that contract-db). Each is measured once it
 * is ready and has then been idle for 5 s: RSS (/proc/<pid>/status), V8 heap total and used, the
 * young generation, external memory, private dirty and shared clean pages (smaps_rollup), and how
 * many JavaScript files V8 holds (DMS's own and node_modules').
 *
 * Every process runs twice: with the launcher's flags (bin/heap-flags.js), and with
 * NODE_OPTIONS=--max-semi-space-size=16 (V8's default young generation, which the launcher then
 * leaves alone). Then the floor, under the same flags: node alone, a level store alone, a libp2p
 * host as DMS builds it, both, and both with the other libraries every role loads (fastify,
 * prom-client, TypeBox, ajv, xstate, pino) imported; the floor loads tsc's separate files (dist/),
 * not the bundle bin/dms.js runs (dist/cli/).
 *
 * A probe preloaded through NODE_OPTIONS (--import, written to the temp dir) reads the figures
 * inside the process when sent SIGUSR2: memoryUsage first, then the scripts, via the inspector.
 *
 * Run: npm run build && node --import tsx scripts/bench-memory.ts [--runs N] [--json out.json]
 *   [--roles provider,requester-only,contract-db (none: only the floor)] [--idle-ms 5000] [--skip-floor]
 *   [--modules role] [--files role] [--extra=<node flags>]... [--bin other/bin/dms.js]
 * `--modules provider` prints the files that role loaded by package, `--files` each file;
 * `--extra` adds a run with those flags on node's command line. Writes bench/results/memory-*.json.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { floorScript, PROBE } from './bench-memory-probes.js'

const ROOT = join(import.meta.dirname, '..')

const MiB = 1024 * 1024

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '1' },
    'idle-ms': { type: 'string', default: '5000' },
    bin: { type: 'string' },
    json: { type: 'string' },
    modules: { type: 'string' },
    files: { type: 'string' },
    extra: { type: 'string', multiple: true },
    'skip-floor': { type: 'boolean', default: false },
    roles: { type: 'string', default: 'provider,requester-only,contract-db' },
    only: { type: 'string' },
  },
})
const RUNS = Number(args.runs)
/** The dms launcher measured: this checkout's, or another's (`--bin`, e.g. the code before a change). */
const BIN = args.bin ?? join(ROOT, 'bin', 'dms.js')
const IDLE_MS = Number(args['idle-ms'])

interface Figures {
  /** From spawn to the ready line. */
  readyMs: number
  rssMB: number
  heapTotalMB: number
  heapUsedMB: number
  externalMB: number
  privateDirtyMB: number
  sharedCleanMB: number
  /** The young generation (V8's new space), committed. */
  youngMB: number
  files: number
  dmsFiles: number
  packageFiles: number
  byPackage: Record<string, number>
  urls: string[]
}

interface Variant {
  name: string
  /** The command line before the dms arguments. */
  argv: string[]
  nodeOptions: string
}

const VARIANTS: Variant[] = [
  { name: 'dms (launcher flags)', argv: [BIN], nodeOptions: '' },
  // V8's own default on 64-bit: given by the user, it wins over the launcher's setting.
  { name: 'NODE_OPTIONS=--max-semi-space-size=16', argv: [BIN], nodeOptions: '--max-semi-space-size=16' },
  ...(args.extra ?? []).map((o) => ({
    name: `node ${o} bin/dms.js`,
    argv: [process.execPath, ...o.split(' '), BIN],
    nodeOptions: '',
  })),
].filter((v, i) => args.only === undefined || args.only.split(',').includes(String(i)))
const ROLES = args.roles.split(',').filter((r) => ['provider', 'requester-only', 'contract-db'].includes(r))

const kB = (smaps: string, field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(smaps)?.[1] ?? NaN)

function packageOf(url: string): string {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  return m !== null ? m[1] : '(dms)'
}

/** Starts one process, waits for its ready line and IDLE_MS more, and reads its figures. */
async function measure(
  dir: string,
  name: string,
  variant: Variant,
  dmsArgs: string[],
): Promise<{ figures: Figures; ready: Record<string, unknown> }> {
  const probe = join(dir, 'probe.mjs')
  const out = join(dir, `${name}.out.json`)
  const [cmd, ...rest] = variant.argv
  const t0 = performance.now()
  const child = spawn(cmd, [...rest, ...dmsArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      DMS_PASSPHRASE: 'bench',
      DMS_LOG_LEVEL: 'warn',
      DMS_PROBE_OUT: out,
      NODE_OPTIONS: `--import=${probe} ${variant.nodeOptions}`.trim(),
    },
  })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise((r) => child.once('exit', r))
  try {
    const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`${name} exited (${code}): ${stderr}`)))
      createInterface({ input: child.stdout }).on('line', (l) => {
        if (l.includes('"ready"')) resolve(JSON.parse(l) as Record<string, unknown>)
      })
    })
    const readyMs = performance.now() - t0
    await new Promise((r) => setTimeout(r, IDLE_MS)) // idle on purpose: this is what is measured
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8')
    const rssMB = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024
    child.kill('SIGUSR2')
    let text: string | undefined
    for (let i = 0; i < 100 && text === undefined; i++)
      text = await readFile(out, 'utf8').catch(async () => {
        await new Promise((r) => setTimeout(r, 50))
        return undefined
      })
    if (text === undefined) throw new Error(`${name}: the probe did not answer`)
    const o = JSON.parse(text) as {
      mem: NodeJS.MemoryUsage
      smaps: string
      urls: string[]
      spaces: Record<string, [number, number]>
    }
    const files = o.urls.filter((u) => u.startsWith('file:') || u.startsWith('/'))
    const byPackage: Record<string, number> = {}
    for (const f of files) byPackage[packageOf(f)] = (byPackage[packageOf(f)] ?? 0) + 1
    const figures: Figures = {
      readyMs,
      rssMB,
      heapTotalMB: o.mem.heapTotal / MiB,
      heapUsedMB: o.mem.heapUsed / MiB,
      externalMB: o.mem.external / MiB,
      privateDirtyMB: kB(o.smaps, 'Private_Dirty') / 1024,
      sharedCleanMB: kB(o.smaps, 'Shared_Clean') / 1024,
      youngMB: (o.spaces.new_space?.[0] ?? NaN) / MiB,
      files: files.length - 1, // less the probe itself
      dmsFiles: (byPackage['(dms)'] ?? 1) - 1,
      packageFiles: files.length - (byPackage['(dms)'] ?? 0),
      byPackage,
      urls: files,
    }
    return { figures, ready }
  } finally {
    child.kill('SIGTERM')
    await exited
    await rm(out, { force: true })
  }
}

const offer = {
  cpu: 1,
  memoryBytes: 512 * MiB,
  diskBytes: 1024 * MiB,
  gpus: 0,
  prices: { perCpuHour: 1, perGiBMemoryHour: 1, perGiBDiskHour: 1, perGpuHour: 1, minJobPrice: 1 },
}

async function round(variant: Variant): Promise<Record<string, Figures>> {
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-mem-'))
  try {
    await writeFile(join(dir, 'probe.mjs'), PROBE)
    const cdbCfg = join(dir, 'cdb.json')
    await writeFile(cdbCfg, JSON.stringify({ dataDir: join(dir, 'cdb') }))
    // The contract-db stays up while the nodes are measured: they name it in their config.
    const cdb = await measure(dir, 'contract-db', variant, ['contract-db', 'run', '--config', cdbCfg])
    const contractDb = { peer: String(cdb.ready.peerId), addrs: cdb.ready.addrs as string[] }
    const provCfg = join(dir, 'provider.json')
    await writeFile(
      provCfg,
      JSON.stringify({
        dataDir: join(dir, 'provider'),
        oneHost: true,
        provider: { contractDb: contractDb.peer, offer },
      }),
    )
    const reqCfg = join(dir, 'requester.json')
    await writeFile(
      reqCfg,
      JSON.stringify({ dataDir: join(dir, 'requester'), oneHost: true, requester: { contractDb } }),
    )
    const out: Record<string, Figures> = { 'contract-db': cdb.figures }
    if (ROLES.includes('provider'))
      out.provider = (await measure(dir, 'provider', variant, ['run', '--config', provCfg])).figures
    if (ROLES.includes('requester-only'))
      out['requester-only'] = (await measure(dir, 'requester', variant, ['run', '--config', reqCfg])).figures
    return out
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')

const loadBefore = load()
const results: Record<string, Record<string, Figures[]>> = {}
for (let r = 0; r < RUNS; r++)
  for (const v of ROLES.length > 0 ? VARIANTS : []) {
    const figs = await round(v)
    for (const [role, f] of Object.entries(figs)) ((results[v.name] ??= {})[role] ??= []).push(f)
  }
const FLOORS = ['empty', 'level', 'libp2p', 'libp2p+level', 'libp2p+level+libraries']
const floors: Record<string, Figures[]> = {}
if (!args['skip-floor'])
  for (let r = 0; r < RUNS; r++) {
    const dir = await mkdtemp(join(tmpdir(), 'dms-bench-mem-'))
    try {
      await writeFile(join(dir, 'probe.mjs'), PROBE)
      await writeFile(join(dir, 'floor.mjs'), floorScript(ROOT))
      const v: Variant = { name: 'floor', argv: [process.execPath, join(dir, 'floor.mjs')], nodeOptions: '' }
      for (const what of FLOORS)
        (floors[what] ??= []).push((await measure(dir, what, v, [what, dir])).figures)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }
const loadAfter = load()

console.log(`load average ${loadBefore} before, ${loadAfter} after; ${RUNS} run(s), medians; MB`)
const cols = [
  'process',
  'start',
  'RSS',
  'heap total',
  'heap used',
  'young gen',
  'external',
  'private dirty',
  'shared clean',
  'JS files (dms + packages)',
  'ready (ms)',
]
console.log(cols.join(' | '))
const summary: Record<string, Record<string, Record<string, number>>> = {}
for (const role of ROLES)
  for (const v of VARIANTS) {
    const fs = results[v.name][role]
    const m = (k: keyof Figures) => median(fs.map((f) => f[k] as number))
    ;(summary[role] ??= {})[v.name] = {
      rssMB: m('rssMB'),
      heapTotalMB: m('heapTotalMB'),
      heapUsedMB: m('heapUsedMB'),
      externalMB: m('externalMB'),
      youngMB: m('youngMB'),
      privateDirtyMB: m('privateDirtyMB'),
      sharedCleanMB: m('sharedCleanMB'),
      readyMs: m('readyMs'),
      files: m('files'),
      dmsFiles: m('dmsFiles'),
      packageFiles: m('packageFiles'),
    }
    row(role, v.name, m)
  }
const floorSummary: Record<string, Record<string, number>> = {}
for (const [what, fs] of Object.entries(floors)) {
  const m = (k: keyof Figures) => median(fs.map((f) => f[k] as number))
  floorSummary[what] = {
    rssMB: m('rssMB'),
    heapTotalMB: m('heapTotalMB'),
    heapUsedMB: m('heapUsedMB'),
    privateDirtyMB: m('privateDirtyMB'),
    sharedCleanMB: m('sharedCleanMB'),
    files: m('files'),
  }
  row(`floor: ${what}`, 'node + launcher flags', m)
}

function row(name: string, start: string, m: (k: keyof Figures) => number): void {
  console.log(
    [
      name,
      start,
      m('rssMB').toFixed(1),
      m('heapTotalMB').toFixed(1),
      m('heapUsedMB').toFixed(1),
      m('youngMB').toFixed(1),
      m('externalMB').toFixed(1),
      m('privateDirtyMB').toFixed(1),
      m('sharedCleanMB').toFixed(1),
      `${m('files')} (${m('dmsFiles')} + ${m('packageFiles')})`,
      m('readyMs').toFixed(0),
    ].join(' | '),
  )
}
if (args.modules !== undefined) {
  const f = results[VARIANTS[0].name][args.modules]?.[0]
  if (f === undefined) throw new Error(`--modules: no role ${args.modules}`)
  console.log(`\nfiles loaded by ${args.modules}, by package:`)
  console.log(
    Object.entries(f.byPackage)
      .sort((a, b) => b[1] - a[1])
      .map(([p, n]) => `${p} ${n}`)
      .join(', '),
  )
}
if (args.files !== undefined) {
  const f = results[VARIANTS[0].name][args.files]?.[0]
  if (f === undefined) throw new Error(`--files: no role ${args.files}`)
  console.log(`\nfiles loaded by ${args.files}:\n${f.urls.join('\n')}`)
}
const jsonPath =
  args.json ?? join(ROOT, 'bench', 'results', `memory-${new Date().toISOString().replaceAll(':', '-')}.json`)
await mkdir(dirname(jsonPath), { recursive: true })
await writeFile(
  jsonPath,
  JSON.stringify(
    {
      date: new Date().toISOString(),
      load: { before: loadBefore, after: loadAfter },
      runs: RUNS,
      idleMs: IDLE_MS,
      summary,
      floor: floorSummary,
    },
    null,
    2,
  ),
)
console.log(`\nwritten to ${jsonPath}`)
