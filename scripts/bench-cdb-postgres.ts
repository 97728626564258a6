/**
 * The contract-db on PostgreSQL (issue 36): the expiry sweep over many stored contracts (as
 * bench-cdb-expiry.ts measures it on level), and the latency of one verify and one settle on
 * each backend. A throwaway cluster (scripts/postgres-cluster.sh), removed at the end.
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-cdb-postgres.ts
 *   env: BENCH_SIZES (default 10000,100000), BENCH_SETTLES (default 200)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { ManualClock } from '../actors/clock.js'
import { ContractDbService } from '../dms/contract-db/service.js'
import { LevelContractDbStore } from '../dms/contract-db/store/level.js'
import type { ContractDbStore } from '../dms/contract-db/store/port.js'
import { PostgresContractDbStore } from '../dms/contract-db/store/postgres.js'
import { silentLogger } from '../dms/log.js'
import { openDb } from '../dms/store/db.js'
import { makeContract, makeSettle, newParty } from '../test/helpers/contracts.js'
import { startPostgres } from '../test/helpers/postgres.js'
import { freshDatabase } from '../test/helpers/postgres-db.js'

const sizes = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number)
const SETTLES = Number(process.env.BENCH_SETTLES ?? 200)
const DUE = 100
const NOW = 1_700_000_000_000
const HOUR = 3_600_000
const ms = (x: number) => x.toFixed(1)
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]

const cluster = await startPostgres()
if (cluster === undefined) throw new Error('no PostgreSQL server programs: run scripts/postgres-bootstrap.sh')

/** n active volunteer contracts, DUE of them past settleBy + the claim window, written in bulk. */
async function sweep(n: number) {
  const books = await freshDatabase(cluster!)
  const url = books.url
  const store = new PostgresContractDbStore({ url })
  await store.open()
  const cdb = newParty()
  const signed = makeContract(newParty(), newParty(), cdb.peer, { now: NOW, pricePerHour: 0 })
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  let t = performance.now()
  for (let from = 0; from < n; from += 5000) {
    const ids: string[] = []
    const watch: number[] = []
    const recs: string[] = []
    for (let i = from; i < Math.min(n, from + 5000); i++) {
      const contractId = `bench-${String(i).padStart(8, '0')}`
      const settleBy = i < DUE ? NOW - 2 * HOUR : NOW + 24 * HOUR
      const rec = {
        contract: { ...signed, terms: { ...signed.terms, contractId } },
        state: 'active',
        proof: {},
        activatedAt: NOW - 3 * HOUR,
        settleBy,
        history: [{ state: 'active', at: NOW - 3 * HOUR }],
      }
      ids.push(contractId)
      watch.push(settleBy)
      recs.push(JSON.stringify(rec))
    }
    await client.query(
      `insert into cdb_contracts (id, state, requester, provider, escrow, watch_from, activated_at, record)
       select id, 'active', $4, $5, 0, w, $6, r::jsonb from unnest($1::text[], $2::bigint[], $3::text[]) as u(id, w, r)`,
      [ids, watch, recs, signed.terms.requester.peer, signed.terms.provider.peer, NOW - 3 * HOUR],
    )
  }
  await client.query('analyze cdb_contracts')
  const load = performance.now() - t
  const svc = new ContractDbService({
    system: { peerId: cdb.peer } as never,
    key: cdb.key,
    db: undefined as never,
    store,
    clock: new ManualClock(NOW),
    log: silentLogger,
  })
  t = performance.now()
  await svc.openBooks()
  const open = performance.now() - t
  t = performance.now()
  const expired = await svc.expireDue()
  const first = performance.now() - t
  if (expired.length !== DUE) throw new Error(`expired ${expired.length}, expected ${DUE}`)
  const idle: number[] = []
  for (let i = 0; i < 3; i++) {
    t = performance.now()
    if ((await svc.expireDue()).length !== 0) throw new Error('a second sweep expired again')
    idle.push(performance.now() - t)
  }
  t = performance.now()
  const listed = (await svc.listContracts()).length
  const list = performance.now() - t
  console.log(
    `postgres ${n} contracts: bulk load ${ms(load)} ms, first open ${ms(open)} ms, sweep expiring ${DUE} ${ms(first)} ms, ` +
      `sweep with none due (median of 3) ${ms(pct(idle, 0.5))} ms, whole listing (${listed}) ${ms(list)} ms`,
  )
  await client.end()
  await store.close()
  await books.drop()
}

/** SETTLES contracts verified then settled one at a time: each call's latency. */
async function latency(name: string, store: ContractDbStore) {
  const cdb = newParty()
  const req = newParty()
  const prov = newParty()
  const clock = new ManualClock(NOW)
  const svc = new ContractDbService({
    system: { peerId: cdb.peer } as never,
    key: cdb.key,
    db: undefined as never,
    store,
    clock,
    log: silentLogger,
  })
  await svc.openBooks()
  await svc.approve(req.peer)
  await svc.approve(prov.peer)
  await svc.credit(req.peer, 1_000_000_000)
  const verify: number[] = []
  const settle: number[] = []
  for (let i = 0; i < SETTLES; i++) {
    const c = makeContract(req, prov, cdb.peer, {
      now: clock.now(),
      pricePerHour: 3600,
      maxDurationSeconds: 60,
    })
    let t = performance.now()
    await svc.verify(req.peer, c)
    verify.push(performance.now() - t)
    clock.advance(1000)
    const s = makeSettle(c, req, prov, { wallSeconds: 1 })
    t = performance.now()
    await svc.settle(prov.peer, s)
    settle.push(performance.now() - t)
  }
  console.log(
    `${name}: verify p50 ${ms(pct(verify, 0.5))} ms p95 ${ms(pct(verify, 0.95))} ms; ` +
      `settle p50 ${ms(pct(settle, 0.5))} ms p95 ${ms(pct(settle, 0.95))} ms (${SETTLES} each)`,
  )
}

try {
  for (const n of sizes) await sweep(n)
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-cdb-pg-'))
  const db = await openDb(join(dir, 'db'))
  await latency('level', new LevelContractDbStore(db))
  await db.close()
  await rm(dir, { recursive: true, force: true })
  const books = await freshDatabase(cluster)
  const store = new PostgresContractDbStore({ url: books.url })
  await latency('postgres', store)
  await store.close()
  await books.drop()
} finally {
  await cluster.stop()
}
