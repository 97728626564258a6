/**
 * The contract-db at scale (issue 36; specs/benchmarks.md, "12"), in three parts:
 *
 * - `throughput`: verifications and settlements per second, BENCH_OPS of each sent all at once
 *   (in-process calls, as the handlers make them), on level, on PostgreSQL with one instance, and
 *   with two instances over one database (the calls alternate between them).
 * - `million`: BENCH_MILLION contracts seeded in bulk through the store (its transactions, 5000
 *   records each; not through the protocol) on each backend, then the first open, the expiry
 *   sweep (100 due, then none), the operator's first page, a page deep in the listing and the
 *   counts by state.
 * - `rss`: a contract-db node (its metrics included) verifying and settling jobs one after
 *   another, its RSS after a GC at each of BENCH_RSS_AT jobs.
 *
 * A throwaway cluster (scripts/postgres-cluster.sh) and temp dirs, removed at the end. Each
 * figure is printed with the load average beside it: the machine may be shared.
 *
 *   node --expose-gc --import tsx --import ./actors/polyfill.ts scripts/bench-cdb-scale.ts
 *   env: BENCH_PARTS (throughput,million,rss), BENCH_OPS (1000), BENCH_MILLION (1000000),
 *        BENCH_RSS_AT (1000,10000,100000)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { ManualClock } from '../actors/clock.js'
import { ContractDbNode } from '../dms/contract-db/node.js'
import type { ContractRecord } from '../dms/contract-db/records.js'
import { ContractDbService } from '../dms/contract-db/service.js'
import { LevelContractDbStore } from '../dms/contract-db/store/level.js'
import type { ContractDbStore } from '../dms/contract-db/store/port.js'
import { PostgresContractDbStore } from '../dms/contract-db/store/postgres.js'
import { silentLogger } from '../dms/log.js'
import { openDb } from '../dms/store/db.js'
import { makeContract, makeSettle, newParty } from '../test/helpers/contracts.js'
import { startPostgres, type TestPostgres } from '../test/helpers/postgres.js'
import { freshDatabase } from '../test/helpers/postgres-db.js'

const PARTS = new Set((process.env.BENCH_PARTS ?? 'throughput,million,rss').split(','))
const OPS = Number(process.env.BENCH_OPS ?? 1000)
const MILLION = Number(process.env.BENCH_MILLION ?? 1_000_000)
const RSS_AT = (process.env.BENCH_RSS_AT ?? '1000,10000,100000').split(',').map(Number)
const NOW = 1_700_000_000_000
const HOUR = 3_600_000
const DUE = 100
const SEED_BATCH = 5000

const load = () => loadavg()[0].toFixed(1)
const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(0))
const say = (line: string) => console.log(`${line}  [load ${load()}]`)

let cluster: TestPostgres | undefined
const cleanups: Array<() => Promise<void>> = []

async function levelStore(): Promise<ContractDbStore> {
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-cdb-scale-'))
  const db = await openDb(join(dir, 'db'))
  cleanups.push(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })
  return new LevelContractDbStore(db)
}

/** `n` stores over one fresh PostgreSQL schema (n instances), and its URL. */
async function pgStores(n: number): Promise<ContractDbStore[] & { url?: string }> {
  cluster ??= await startPostgres()
  if (cluster === undefined)
    throw new Error('no PostgreSQL server programs: run scripts/postgres-bootstrap.sh')
  const books = await freshDatabase(cluster)
  const stores = Array.from({ length: n }, () => new PostgresContractDbStore({ url: books.url }))
  cleanups.push(async () => {
    for (const s of stores) await s.close()
    await books.drop()
  })
  return Object.assign(stores, { url: books.url })
}

function service(store: ContractDbStore, cdb: ReturnType<typeof newParty>, clock: ManualClock) {
  return new ContractDbService({
    system: { peerId: cdb.peer } as never,
    key: cdb.key,
    db: undefined as never,
    store,
    clock,
    log: silentLogger,
  })
}

/** OPS verifies, then OPS settles, all at once, spread over the instances. */
async function throughput(name: string, stores: ContractDbStore[]) {
  const cdb = newParty()
  const req = newParty()
  const prov = newParty()
  const clock = new ManualClock(NOW)
  const svcs = stores.map((s) => service(s, cdb, clock))
  for (const s of svcs) await s.openBooks()
  await svcs[0].approve(req.peer)
  await svcs[0].approve(prov.peer)
  await svcs[0].credit(req.peer, 1_000_000_000)
  const contracts = Array.from({ length: OPS }, () =>
    makeContract(req, prov, cdb.peer, { now: clock.now(), pricePerHour: 3600, maxDurationSeconds: 60 }),
  )
  let t = performance.now()
  await Promise.all(contracts.map((c, i) => svcs[i % svcs.length].verify(req.peer, c)))
  const verify = performance.now() - t
  clock.advance(1000)
  const settles = contracts.map((c) => makeSettle(c, req, prov, { wallSeconds: 1 }))
  t = performance.now()
  await Promise.all(settles.map((s, i) => svcs[i % svcs.length].settle(prov.peer, s)))
  const settle = performance.now() - t
  const check = await svcs[0].conservation()
  if (!check.ok) throw new Error(`${name}: the books do not add up`)
  say(
    `throughput ${name}: ${(OPS / (verify / 1000)).toFixed(0)} verifications/s, ${(OPS / (settle / 1000)).toFixed(0)} settlements/s (${OPS} each, all at once)`,
  )
}

/** MILLION contracts through the store in transactions of SEED_BATCH: most closed, 1 % active. */
async function million(name: string, store: ContractDbStore, url?: string) {
  await store.open()
  const cdb = newParty()
  const signed = makeContract(newParty(), newParty(), cdb.peer, { now: NOW, pricePerHour: 0 })
  let t = performance.now()
  for (let from = 0; from < MILLION; from += SEED_BATCH) {
    await store.transaction((tx) => {
      for (let i = from; i < Math.min(MILLION, from + SEED_BATCH); i++) {
        const active = i % 100 === 0
        const at = NOW - 30 * 24 * HOUR + i * 1000
        const rec = {
          contract: {
            ...signed,
            terms: { ...signed.terms, contractId: `bench-${String(i).padStart(8, '0')}` },
          },
          state: active ? 'active' : 'settled',
          proof: {},
          activatedAt: at,
          // The DUE oldest active ones past settleBy and the claim window; the rest not yet.
          settleBy: active && i < DUE * 100 ? NOW - 2 * HOUR : NOW + 24 * HOUR,
          history: [{ state: 'active', at }],
        } as unknown as ContractRecord
        tx.putContract(rec)
      }
    })
    if (from % 100_000 === 0 && from > 0) say(`  ${name}: ${from} seeded`)
  }
  const seed = performance.now() - t
  if (url !== undefined) {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    await c.query('analyze cdb_contracts')
    await c.end()
  }
  const svc = service(store, cdb, new ManualClock(NOW))
  t = performance.now()
  await svc.openBooks()
  const open = performance.now() - t
  t = performance.now()
  const expired = await svc.expireDue()
  const sweep = performance.now() - t
  if (expired.length !== DUE) throw new Error(`${name}: expired ${expired.length}, expected ${DUE}`)
  t = performance.now()
  await svc.expireDue()
  const idle = performance.now() - t
  t = performance.now()
  const first = await svc.contractPage({ limit: 100 })
  const page = performance.now() - t
  // Half way down: the cursor of a contract in the middle.
  const mid = MILLION >> 1
  t = performance.now()
  const deep = await svc.contractPage({
    limit: 100,
    after: { activatedAt: NOW - 30 * 24 * HOUR + mid * 1000, id: `bench-${String(mid).padStart(8, '0')}` },
  })
  const deepMs = performance.now() - t
  t = performance.now()
  const activePage = await svc.contractPage({ limit: 100, state: 'active' })
  const activeMs = performance.now() - t
  t = performance.now()
  const counts = await svc.contractCounts()
  const countMs = performance.now() - t
  if (first.contracts.length !== 100 || deep.contracts.length !== 100 || activePage.contracts.length !== 100)
    throw new Error(`${name}: a page was short`)
  say(
    `million ${name}: ${MILLION} seeded in ${(seed / 1000).toFixed(0)} s (${(MILLION / (seed / 1000)).toFixed(0)}/s); ` +
      `first open ${ms(open)} ms; sweep expiring ${DUE} ${ms(sweep)} ms, none due ${ms(idle)} ms; ` +
      `first page (100) ${ms(page)} ms, a page half way ${ms(deepMs)} ms, first active page ${ms(activeMs)} ms; ` +
      `counts by state ${ms(countMs)} ms ${JSON.stringify(counts)}`,
  )
}

/** A node's RSS (after a GC) as it verifies and settles jobs one after another. */
async function rss() {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('run with node --expose-gc')
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-cdb-rss-'))
  const node = new ContractDbNode(
    { dataDir: join(dir, 'cdb'), oneHost: true, socket: false },
    { passphrase: () => Promise.resolve('bench') },
  )
  await node.start()
  cleanups.push(async () => {
    await node.stop()
    await rm(dir, { recursive: true, force: true })
  })
  const svc = node.service
  const req = newParty()
  const prov = newParty()
  await svc.approve(req.peer)
  await svc.approve(prov.peer)
  await svc.credit(req.peer, 1e12)
  const mb = () => (process.memoryUsage().rss / 1e6).toFixed(1)
  gc()
  say(`rss: 0 jobs ${mb()} MB`)
  const t = performance.now()
  let done = 0
  for (const at of RSS_AT) {
    for (; done < at; done++) {
      const c = makeContract(req, prov, node.peerId, { pricePerHour: 3600, maxDurationSeconds: 60 })
      await svc.verify(req.peer, c)
      await svc.settle(prov.peer, makeSettle(c, req, prov, { wallSeconds: 0 }))
    }
    gc()
    const heap = (process.memoryUsage().heapUsed / 1e6).toFixed(1)
    say(
      `rss: ${at} jobs ${mb()} MB (heap ${heap} MB), ${((performance.now() - t) / done).toFixed(2)} ms a job`,
    )
  }
}

try {
  if (PARTS.has('throughput')) {
    await throughput('level', [await levelStore()])
    await throughput('postgres, one instance', await pgStores(1))
    await throughput('postgres, two instances', await pgStores(2))
  }
  if (PARTS.has('million')) {
    await million('level', await levelStore())
    const pgs = await pgStores(1)
    await million('postgres', pgs[0], pgs.url)
  }
  if (PARTS.has('rss')) await rss()
} finally {
  for (const c of cleanups.reverse()) await c().catch((err: unknown) => console.error(err))
  await cluster?.stop()
}
