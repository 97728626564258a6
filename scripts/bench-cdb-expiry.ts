/**
 * The contract-db's expiry sweep (`expireDue()`) over many stored contracts: the time of one
 * sweep when none is due, and one that expires 100 (issue 36). Records are written to a real
 * level database in a temp dir as the contract-db stores them (one signed contract, copied under
 * new ids); the first `openBooks()` builds the expiry index of a database written without it.
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-cdb-expiry.ts
 *   env: BENCH_SIZES (default 10000,100000); BENCH_ROOT: the checkout whose dms/ is measured
 *   (default this one: point it at another to measure before a change with the same script)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import type * as ServiceModule from '../dms/contract-db/service.js'
import type * as DbModule from '../dms/store/db.js'
import type * as TablesModule from '../dms/store/tables.js'
import type * as ClockModule from '../actors/clock.js'
import type * as LogModule from '../dms/log.js'
import type * as ContractsHelpers from '../test/helpers/contracts.js'

const root = resolve(process.env.BENCH_ROOT ?? join(import.meta.dirname, '..'))
const sizes = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number)
const DUE = 100
const { ContractDbService } = (await import(join(root, 'dms/contract-db/service.ts'))) as typeof ServiceModule
const { openDb, subOf } = (await import(join(root, 'dms/store/db.ts'))) as typeof DbModule
const { STORES } = (await import(join(root, 'dms/store/tables.ts'))) as typeof TablesModule
const { ManualClock } = (await import(join(root, 'actors/clock.ts'))) as typeof ClockModule
const { silentLogger } = (await import(join(root, 'dms/log.ts'))) as typeof LogModule
const h = (await import(join(root, 'test/helpers/contracts.ts'))) as typeof ContractsHelpers

const NOW = 1_700_000_000_000
const HOUR = 3_600_000

async function one(n: number) {
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-expiry-'))
  const db = await openDb(join(dir, 'db'))
  try {
    const cdb = h.newParty()
    const req = h.newParty()
    const prov = h.newParty()
    // A volunteer contract (escrow 0): expiring one moves no money, so no account is needed.
    const signed = h.makeContract(req, prov, cdb.peer, { now: NOW, pricePerHour: 0 })
    const sub = subOf(db, STORES.cdbContracts.name)
    let ops: Array<{ type: 'put'; key: string; value: string }> = []
    for (let i = 0; i < n; i++) {
      const contractId = `bench-${String(i).padStart(8, '0')}`
      // DUE of them past settleBy + the claim window at the sweep; the rest settle in a day.
      const settleBy = i < DUE ? NOW - 2 * HOUR : NOW + 24 * HOUR
      const rec = {
        contract: { ...signed, terms: { ...signed.terms, contractId } },
        state: 'active',
        proof: {},
        activatedAt: NOW - 3 * HOUR,
        settleBy,
        history: [{ state: 'active', at: NOW - 3 * HOUR }],
      }
      ops.push({ type: 'put', key: contractId, value: JSON.stringify(rec) })
      if (ops.length === 5000) {
        await sub.batch(ops)
        ops = []
      }
    }
    if (ops.length > 0) await sub.batch(ops)
    const clock = new ManualClock(NOW)
    const system = { peerId: cdb.peer } as never
    const svc = new ContractDbService({ system, key: cdb.key, db, clock, log: silentLogger })
    let t = performance.now()
    await svc.openBooks()
    const open = performance.now() - t
    t = performance.now()
    const expired = await svc.expireDue()
    const first = performance.now() - t
    const idle: number[] = []
    for (let i = 0; i < 3; i++) {
      t = performance.now()
      const again = await svc.expireDue()
      idle.push(performance.now() - t)
      if (again.length !== 0) throw new Error('a second sweep expired again')
    }
    if (expired.length !== DUE) throw new Error(`expired ${expired.length}, expected ${DUE}`)
    idle.sort((a, b) => a - b)
    const ms = (x: number) => x.toFixed(1)
    console.log(
      `${n} contracts: first open ${ms(open)} ms, sweep expiring ${DUE} ${ms(first)} ms, ` +
        `sweep with none due (median of 3) ${ms(idle[1])} ms, rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB`,
    )
  } finally {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  }
}

console.log(`root ${root}`)
for (const n of sizes) await one(n)
