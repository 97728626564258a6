/**
 * The resource ledger's cost per operation on a real level db (each operation is one atomic batch,
 * serialized by the ledger's mutex), and the cost of measuring the machine.
 *
 *   node --import tsx scripts/bench-resources.ts      # env: BENCH_N (default 2000)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { systemClock } from '../actors/clock.js'
import { silentLogger } from '../dms/log.js'
import { ResourceLedger } from '../dms/resources/ledger.js'
import { measureMachine } from '../dms/resources/measure.js'
import type { Resources } from '../dms/resources/types.js'
import { openDb } from '../dms/store/db.js'

const N = Number(process.env.BENCH_N ?? 2000)
const MiB = 1024 ** 2
const small: Resources = { cpu: 0.001, memoryBytes: MiB, diskBytes: 0, gpus: 0 }

const dir = await mkdtemp(join(tmpdir(), 'dms-bench-resources-'))
const db = await openDb(join(dir, 'db'))
const ledger = new ResourceLedger({ db, clock: systemClock, log: silentLogger })
await ledger.start()
await ledger.setOffer({
  resources: { cpu: N, memoryBytes: N * MiB, diskBytes: 0, gpus: 0 },
  prices: { perCpuHour: 1, perGiBMemoryHour: 1, perGiBDiskHour: 0, perGpuHour: 0, minJobPrice: 0 },
  onboardedAt: Date.now(),
})

const rows: Array<[string, number, number]> = []
async function time(name: string, n: number, run: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now()
  await run()
  const ms = performance.now() - t0
  rows.push([name, n, ms])
}

const far = () => Date.now() + 3_600_000
const ids = Array.from({ length: N }, (_, i) => `e${i}`)
await time('reserve (sequential)', N, async () => {
  for (const id of ids) await ledger.reserve(id, 'job', small, far())
})
await time('lock (sequential)', N, async () => {
  for (const id of ids) await ledger.lock(id)
})
await time('allocate (sequential)', N, async () => {
  for (const id of ids) await ledger.allocate(id)
})
await time('release (sequential)', N, async () => {
  for (const id of ids) await ledger.release(id)
})
await time('reserve (concurrent, one mutex)', N, () =>
  Promise.all(ids.map((id) => ledger.reserve(id, 'job', small, far()))),
)
await time('release (concurrent, one mutex)', N, () => Promise.all(ids.map((id) => ledger.release(id))))

const measures: number[] = []
for (let i = 0; i < 5; i++) {
  const t0 = performance.now()
  await measureMachine({ dataDir: dir })
  measures.push(performance.now() - t0)
}

await ledger.stop()
await db.close()
await rm(dir, { recursive: true, force: true })

console.log('| operation | n | total ms | ops/s | µs/op |')
console.log('|---|---:|---:|---:|---:|')
for (const [name, n, ms] of rows)
  console.log(
    `| ${name} | ${n} | ${ms.toFixed(0)} | ${Math.round((n / ms) * 1000)} | ${((ms * 1000) / n).toFixed(0)} |`,
  )
console.log(
  `| measureMachine (first, then warm) | ${measures.length} | ${measures.map((m) => m.toFixed(0)).join(' / ')} | | |`,
)
