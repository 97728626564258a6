/**
 * The PostgreSQL backend of the contract-db's store, on a real throwaway cluster (one per file,
 * a fresh schema per test): the store compliance suite, the money invariants held by the
 * database itself, two stores over one database racing without a lost update (the conflict
 * retried), and the schema created, recorded and refused when newer.
 */
import assert from 'node:assert/strict'
import pg from 'pg'
import type { ContractRecord } from '../../../dms/contract-db/records.js'
import { PostgresContractDbStore, redactedUrl } from '../../../dms/contract-db/store/postgres.js'
import { MIGRATIONS, SCHEMA_TABLE, SCHEMA_VERSION } from '../../../dms/contract-db/store/postgres-schema.js'
import { cdbStoreCompliance, storedContract } from '../../helpers/cdb-store-compliance.js'
import { startPostgres, type TestPostgres } from '../../helpers/postgres.js'
import { freshDatabase, type TestDatabase } from '../../helpers/postgres-db.js'

describe('contract-db store: PostgreSQL', function () {
  this.timeout(60_000)
  let cluster: TestPostgres | undefined
  const dbs: TestDatabase[] = []
  const stores: PostgresContractDbStore[] = []

  before(async function () {
    cluster = await startPostgres()
    if (cluster === undefined) this.skip()
  })
  after(async () => {
    await cluster?.stop()
  })
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close().catch(() => undefined)
    for (const d of dbs.splice(0)) await d.drop()
  })

  async function database(): Promise<TestDatabase> {
    const d = await freshDatabase(cluster!)
    dbs.push(d)
    return d
  }
  function storeOn(url: string, init: { maxRetries?: number } = {}): PostgresContractDbStore {
    const s = new PostgresContractDbStore({ url, ...init })
    stores.push(s)
    return s
  }
  async function sql<R extends pg.QueryResultRow>(url: string, text: string, args: unknown[] = []) {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      return (await c.query<R>(text, args)).rows
    } finally {
      await c.end()
    }
  }

  cdbStoreCompliance('postgres', async () => {
    const d = await database()
    const store = storeOn(d.url)
    // The file's afterEach closes it and drops its schema.
    return { store, cleanup: () => Promise.resolve() }
  })

  it('the database refuses a negative amount, and a settlement that does not split its escrow', async () => {
    const { url } = await database()
    const store = storeOn(url)
    await store.open()
    await store.transaction((tx) => tx.putAccount({ peer: 'a', balance: 5, escrow: 0 }))
    // The ledger checks these first (ledger.ts); the database holds them whatever code writes.
    await assert.rejects(
      store.transaction((tx) => tx.putAccount({ peer: 'a', balance: -1, escrow: 6 })),
      (err: { code?: string }) => err.code === '23514',
    )
    await assert.rejects(
      store.transaction((tx) => tx.putAccount({ peer: 'a', balance: 2 ** 53, escrow: 0 })),
      (err: { code?: string }) => err.code === '23514',
    )
    const rec = storedContract('c', { state: 'settled' })
    rec.contract.terms.escrow = 10
    rec.settlement = { paidToProvider: 7, refundedToRequester: 4 } as ContractRecord['settlement']
    await assert.rejects(
      store.transaction((tx) => tx.putContract(rec)),
      (err: { code?: string }) => err.code === '23514',
    )
    assert.deepEqual(await store.account('a'), { peer: 'a', balance: 5, escrow: 0 })
    assert.equal(await store.contract('c'), undefined)
    // Stored as exact integers: bigint columns, not floats.
    const cols = await sql<{ column_name: string; data_type: string }>(
      url,
      `select column_name, data_type from information_schema.columns
       where table_schema = current_schema() and table_name in ('cdb_accounts', 'cdb_contracts') and column_name in ('balance', 'escrow', 'paid', 'refunded')`,
    )
    assert.ok(cols.length === 5 && cols.every((c) => c.data_type === 'bigint'), JSON.stringify(cols))
  })

  it('two stores over one database: concurrent read-then-write transactions conflict, retry, and lose no update', async () => {
    const { url } = await database()
    const a = storeOn(url)
    const b = storeOn(url, { maxRetries: 50 })
    await Promise.all([a.open(), b.open()])
    const bump = (s: PostgresContractDbStore) =>
      s.transaction(async (tx) => {
        const acc = (await tx.account('x')) ?? { peer: 'x', balance: 0, escrow: 0 }
        // A pause between the read and the write, so that the other store's transaction overlaps.
        await new Promise((r) => setTimeout(r, 2))
        tx.putAccount({ ...acc, balance: acc.balance + 1 })
      })
    await Promise.all(Array.from({ length: 20 }, (_, i) => bump(i % 2 === 0 ? a : b)))
    assert.equal((await a.account('x'))?.balance, 20)
    assert.ok(a.retries + b.retries > 0, 'the stores raced: some transaction was retried')
  })

  it('a transaction that keeps conflicting fails StoreConflictError and writes nothing', async () => {
    const { url } = await database()
    const a = storeOn(url, { maxRetries: 0 })
    const b = storeOn(url)
    await Promise.all([a.open(), b.open()])
    await a.transaction((tx) => tx.putAccount({ peer: 'x', balance: 1, escrow: 0 }))
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let read!: () => void
    const hasRead = new Promise<void>((r) => (read = r))
    // `a` reads, waits while `b` commits a write to the same row, then writes: a conflict.
    const slow = a.transaction(async (tx) => {
      const acc = (await tx.account('x'))!
      read()
      await held
      tx.putAccount({ ...acc, balance: acc.balance + 10 })
    })
    await hasRead
    await b.transaction(async (tx) => tx.putAccount({ ...(await tx.account('x'))!, balance: 2 }))
    release()
    await assert.rejects(slow, { name: 'StoreConflictError', code: 'STORE_CONFLICT' })
    assert.equal((await a.account('x'))?.balance, 2)
  })

  it('open() creates the schema once, records its version, and refuses a newer one', async () => {
    const { url } = await database()
    await Promise.all([storeOn(url).open(), storeOn(url).open()])
    const rows = await sql<{ version: number }>(url, 'select version from cdb_schema order by version')
    assert.deepEqual(
      rows.map((r) => r.version),
      Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
    )
    const indexes = await sql<{ indexname: string }>(
      url,
      `select indexname from pg_indexes where schemaname = current_schema() and tablename = 'cdb_contracts' order by indexname`,
    )
    assert.deepEqual(
      indexes.map((r) => r.indexname),
      [
        'cdb_contracts_due',
        'cdb_contracts_listing',
        'cdb_contracts_pkey',
        'cdb_contracts_provider',
        'cdb_contracts_requester',
        'cdb_contracts_state_listing',
      ],
    )
    await sql(url, 'insert into cdb_schema (version) values ($1)', [SCHEMA_VERSION + 1])
    await assert.rejects(storeOn(url).open(), { name: 'StoreSchemaError', code: 'STORE_SCHEMA_NEWER' })
  })

  it('the expiry sweep reads through its index, not every row', async () => {
    const { url } = await database()
    const store = storeOn(url)
    await store.open()
    await store.transaction((tx) => {
      for (let i = 0; i < 300; i++) tx.putContract(storedContract(`c${i}`, { settleBy: 10_000 + i }))
    })
    await sql(url, 'analyze cdb_contracts')
    const plan = await sql<{ 'QUERY PLAN': string }>(
      url,
      `explain select record from cdb_contracts where state = 'active' and watch_from <= 5 order by watch_from, id`,
    )
    assert.match(plan.map((r) => r['QUERY PLAN']).join('\n'), /cdb_contracts_due/)
    assert.equal((await store.dueBy(10_004)).length, 5)
  })

  it('a database of schema 1 gets the listing indexes, its contracts paged through them', async () => {
    const { url } = await database()
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      await c.query(SCHEMA_TABLE)
      for (const q of MIGRATIONS[0]) await c.query(q)
      await c.query('insert into cdb_schema (version) values (1)')
    } finally {
      await c.end()
    }
    const old = storeOn(url)
    // Written by schema 1's code: the rows need nothing new. Few settled: the state's index pays.
    await old.transaction((tx) => {
      for (let i = 0; i < 300; i++)
        tx.putContract(
          storedContract(`c${String(i).padStart(3, '0')}`, {
            activatedAt: 1000 + i,
            state: i % 50 === 0 ? 'settled' : 'active',
          }),
        )
    })
    await old.close()
    const store = storeOn(url)
    await store.open()
    await sql(url, 'analyze cdb_contracts')
    const plan = async (text: string) =>
      (await sql<{ 'QUERY PLAN': string }>(url, `explain ${text}`)).map((r) => r['QUERY PLAN']).join('\n')
    assert.match(
      await plan(
        `select record from cdb_contracts where (activated_at, id collate "C") < (1100, 'c100') order by activated_at desc, id collate "C" desc limit 11`,
      ),
      /cdb_contracts_listing/,
    )
    assert.match(
      await plan(
        `select record from cdb_contracts where state = 'settled' and (activated_at, id collate "C") < (1100, 'c100') order by activated_at desc, id collate "C" desc limit 11`,
      ),
      /cdb_contracts_state_listing/,
    )
    const page = await store.page({ state: 'settled', limit: 3, after: { activatedAt: 1100, id: 'c100' } })
    assert.deepEqual(
      page.contracts.map((r) => r.contract.terms.contractId),
      ['c050', 'c000'],
    )
    assert.deepEqual(await store.countByState(), { active: 294, settled: 6 })
  })

  it('the URL it logs hides the password', () => {
    assert.equal(
      redactedUrl('postgres://dms:s3cret@127.0.0.1:5432/dms'),
      'postgres://dms:***@127.0.0.1:5432/dms',
    )
    assert.doesNotMatch(redactedUrl('not a url s3cret'), /s3cret/)
  })
})
