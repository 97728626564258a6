/**
 * The code bench-memory.ts runs inside the processes it measures: the probe preloaded into each
 * (its figures on SIGUSR2) and the floor's script (only one part loaded and started).
 */
import { join } from 'node:path'

/** Preloaded into every measured process; answers SIGUSR2 with its figures in $DMS_PROBE_OUT. */
export const PROBE = `
import { writeFileSync, readFileSync } from 'node:fs'
import { getHeapSpaceStatistics } from 'node:v8'
process.on('SIGUSR2', async () => {
  const mem = process.memoryUsage()
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, [s.space_size, s.space_used_size]]))
  const smaps = readFileSync('/proc/self/smaps_rollup', 'utf8')
  const { Session } = await import('node:inspector')
  const s = new Session()
  s.connect()
  const urls = []
  s.on('Debugger.scriptParsed', (m) => urls.push(m.params.url))
  s.post('Debugger.enable', () => {
    s.post('Debugger.disable')
    s.disconnect()
    writeFileSync(process.env.DMS_PROBE_OUT, JSON.stringify({ mem, smaps, urls, spaces }))
  })
})
`

/**
 * The floor: the same launcher flags (bin/heap-flags.js), then only `what` loaded and started:
 * nothing, a level store, a libp2p host as DMS configures it (dist/dms/network/host.js), or both.
 */
export const floorScript = (ROOT: string): string => `
import { setFlagsFromString } from 'node:v8'
import { dirname, join } from 'node:path'
import { heapFlags } from ${JSON.stringify(join(ROOT, 'bin', 'heap-flags.js'))}
for (const f of heapFlags(process.env.NODE_OPTIONS, process.execArgv, ['run'])) setFlagsFromString(f)
const what = process.argv[2]
const dist = ${JSON.stringify(join(ROOT, 'dist'))}
await import(join(dist, 'actors/polyfill.js')) // as the CLI does first
const keep = []
if (what.includes('level')) {
  const { openDb } = await import(join(dist, 'dms/store/db.js'))
  keep.push(await openDb(join(process.argv[3], 'db-' + what)))
}
if (what.includes('libp2p')) {
  const { createHost } = await import(join(dist, 'dms/network/host.js'))
  const { KeyPair } = await import(join(dist, 'actors/identity.js'))
  const host = await createHost(KeyPair.generate(), { oneHost: true })
  await host.start()
  keep.push(host)
}
// Every role's libraries besides those two, loaded (not used): the REST server, metrics, schemas,
// state machines, logs.
if (what.includes('libraries')) {
  const { createRequire } = await import('node:module')
  const load = createRequire(${JSON.stringify(join(ROOT, 'package.json'))})
  for (const m of ['fastify', 'prom-client', '@sinclair/typebox', 'ajv', 'xstate', 'pino']) keep.push(load(m))
}
process.stdout.write(JSON.stringify({ event: 'ready', what }) + '\\n')
setInterval(() => keep.length, 60_000)
process.on('SIGTERM', () => process.exit(0))
`
