/**
 * The PostgreSQL backend of the contract-db's storage port (port.ts; specs/contract-db.md,
 * "PostgreSQL"), through `pg`. Several contract-db instances may share one database: every
 * transaction runs `isolation level serializable` and is retried whole on a serialization failure
 * (40001) or a deadlock (40P01), so the database decides which of two racing writers wins.
 * Within one process, transactions run one at a time (a queue): conflicts arise only between
 * instances. Tables, constraints and indexes: postgres-schema.ts, created or migrated at `open()`.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { Logger } from 'pino'
import { SerialQueue } from '../../../actors/serial.js'
import { silentLogger } from '../../log.js'
import { watchFrom } from '../deadlines.js'
import type { Account, ApprovedEntity, ContractRecord, CreditedTotal, StoredState } from '../records.js'
import { StoreConflictError, StoreSchemaError } from './errors.js'
import { checkPage, type ContractPageOf, type ContractPageQuery } from './page.js'
import type { BooksSnapshot, CdbTx, ContractDbStore, ContractQuery } from './port.js'
import { MIGRATIONS, SCHEMA_LOCK, SCHEMA_TABLE, SCHEMA_VERSION } from './postgres-schema.js'

/** Serialization failure, deadlock: the transaction is run again. */
const RETRYABLE = new Set(['40001', '40P01'])
const CREDITED = 'credited'

export interface PostgresStoreInit {
  /** `postgres://user@host:port/db`; a password in it is used, never logged. */
  url: string
  /** The password, when not in the URL (read from `store.passwordFile` by the caller). */
  password?: string
  /** Connections in the pool (reads run beside the one transaction at a time). @default 4 */
  maxConnections?: number
  /** Retries of a transaction that conflicted, before StoreConflictError. @default 8 */
  maxRetries?: number
}

/** The URL without its password (for logs and errors). */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password !== '') u.password = '***'
    return u.toString()
  } catch {
    return '(an unparseable URL)'
  }
}

/** `url` with `password` in it (the client lets a URL's fields win over separate ones). */
function withPassword(url: string, password: string | undefined): string {
  if (password === undefined) return url
  const u = new URL(url)
  u.password = password
  return u.toString()
}

type Queryable = Pick<pg.PoolClient, 'query'>

export class PostgresContractDbStore implements ContractDbStore {
  readonly backend = 'postgres' as const
  private readonly pool: pg.Pool
  private readonly queue = new SerialQueue()
  private readonly maxRetries: number
  private readonly log: Logger
  private opened?: Promise<void>
  /** Transactions retried after a conflict (metrics, tests). */
  retries = 0

  constructor(init: PostgresStoreInit, components: { log?: Logger } = {}) {
    this.log = components.log ?? silentLogger
    this.maxRetries = init.maxRetries ?? 8
    this.pool = new pg.Pool({
      connectionString: withPassword(init.url, init.password),
      max: init.maxConnections ?? 4,
      connectionTimeoutMillis: 10_000,
    })
    // An idle connection that breaks (a server restart) must not crash the process.
    this.pool.on('error', (err) => this.log.warn({ err: err.message }, 'postgres connection lost'))
  }

  open(): Promise<void> {
    // A failed open (a server down) is tried again at the next call, not remembered.
    this.opened ??= this.migrate().catch((err: unknown) => {
      this.opened = undefined
      throw err
    })
    return this.opened
  }

  /**
   * Removes every contract, account, approval and total, in one statement. Only for a migration
   * that found the target empty and failed part way (migrate.ts): never on books in service.
   */
  async clear(): Promise<void> {
    await this.queue.run(() =>
      this.pool.query('truncate cdb_contracts, cdb_accounts, cdb_approvals, cdb_books'),
    )
  }

  /** Closes the pool's connections. */
  async close(): Promise<void> {
    await this.queue.idle()
    await this.pool.end()
  }

  contract(id: string) {
    return contractOf(this.pool, id)
  }
  account(peer: string) {
    return accountOf(this.pool, peer)
  }
  approval(peer: string) {
    return approvalOf(this.pool, peer)
  }
  credited() {
    return creditedOf(this.pool)
  }

  transaction<T>(fn: (tx: CdbTx) => T | Promise<T>): Promise<T> {
    return this.queue.run(() => this.serializable(fn))
  }

  async dueBy(now: number): Promise<ContractRecord[]> {
    const { rows } = await this.pool.query<{ record: ContractRecord }>(
      `select record from cdb_contracts where state = 'active' and watch_from <= $1 order by watch_from, id`,
      [now],
    )
    return rows.map((r) => r.record)
  }

  async contracts(q: ContractQuery = {}): Promise<ContractRecord[]> {
    const where: string[] = []
    const args: unknown[] = []
    if (q.state !== undefined) where.push(`state = $${args.push(q.state)}`)
    if (q.party !== undefined) {
      const n = args.push(q.party)
      where.push(`(requester = $${n} or provider = $${n})`)
    }
    const { rows } = await this.pool.query<{ record: ContractRecord }>(
      `select record from cdb_contracts ${where.length > 0 ? `where ${where.join(' and ')}` : ''} order by id`,
      args,
    )
    return rows.map((r) => r.record)
  }

  async page(q: ContractPageQuery): Promise<ContractPageOf<ContractRecord>> {
    checkPage(q)
    const where: string[] = []
    const args: unknown[] = []
    if (q.state !== undefined) where.push(`state = $${args.push(q.state)}`)
    if (q.after !== undefined)
      where.push(
        `(activated_at, id collate "C") < ($${args.push(q.after.activatedAt)}, $${args.push(q.after.id)})`,
      )
    // One more row than asked says whether a next page exists.
    const { rows } = await this.pool.query<{ record: ContractRecord; at: string }>(
      `select record, activated_at as at from cdb_contracts ${where.length > 0 ? `where ${where.join(' and ')}` : ''}
       order by activated_at desc, id collate "C" desc limit $${args.push(q.limit + 1)}`,
      args,
    )
    const page = rows.slice(0, q.limit)
    const contracts = page.map((r) => r.record)
    const last = page.at(-1)
    if (rows.length <= q.limit || last === undefined) return { contracts }
    return { contracts, next: { activatedAt: Number(last.at), id: last.record.contract.terms.contractId } }
  }

  async countByState(): Promise<Partial<Record<StoredState, number>>> {
    const { rows } = await this.pool.query<{ state: StoredState; n: string }>(
      'select state, count(*) as n from cdb_contracts group by state',
    )
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]))
  }

  async accounts(): Promise<Account[]> {
    const { rows } = await this.pool.query<AccountRow>(
      'select peer, balance, escrow from cdb_accounts order by peer',
    )
    return rows.map(accountRow)
  }

  /**
   * One statement, so one snapshot (each statement sees the database as of its start): no other
   * instance's commit lands between the total and the sums. The sums are computed by PostgreSQL
   * (`numeric`, exact) rather than by reading every account here.
   */
  async books(): Promise<BooksSnapshot> {
    const { rows } = await this.pool.query<{
      credited: CreditedTotal | null
      balances: string
      escrow: string
      accounts: string
    }>(
      `select (select value from cdb_books where key = $1) as credited,
              coalesce(sum(balance), 0)::text as balances, coalesce(sum(escrow), 0)::text as escrow,
              count(*)::text as accounts
         from cdb_accounts`,
      [CREDITED],
    )
    const r = rows[0]
    return {
      credited: r.credited ?? undefined,
      balances: Number(r.balances),
      escrow: Number(r.escrow),
      accounts: Number(r.accounts),
    }
  }

  /** A count over the `(requester, state)` index: the active contracts of one requester are few. */
  async activeVolunteers(requester: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `select count(*)::int as n from cdb_contracts where requester = $1 and state = 'active' and escrow = 0`,
      [requester],
    )
    return rows[0]?.n ?? 0
  }

  async approvals(): Promise<ApprovedEntity[]> {
    const { rows } = await this.pool.query<{ record: ApprovedEntity }>(
      'select record from cdb_approvals order by peer',
    )
    return rows.map((r) => r.record)
  }

  /** Runs `fn` in one serializable transaction, again on a conflict, at most `maxRetries` times more. */
  private async serializable<T>(fn: (tx: CdbTx) => T | Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.pool.connect()
      let broken = false
      try {
        await client.query('begin isolation level serializable')
        const tx = new PgTx(client)
        const out = await fn(tx)
        await tx.flush()
        await client.query('commit')
        return out
      } catch (err) {
        await client.query('rollback').catch(() => {
          broken = true
        })
        const code = (err as { code?: unknown }).code
        if (typeof code !== 'string' || !RETRYABLE.has(code)) throw err
        if (attempt >= this.maxRetries) throw new StoreConflictError(attempt + 1, { cause: err })
        this.retries++
        // Jittered and growing: two instances that collided do not collide again in step.
        await sleep(Math.min(200, 2 ** attempt) * (0.5 + Math.random()))
      } finally {
        client.release(broken)
      }
    }
  }

  /** Creates the tables of a new database, or applies the migrations an older one lacks. */
  private async migrate(): Promise<void> {
    const client = await this.pool.connect()
    try {
      await client.query('begin')
      await client.query('select pg_advisory_xact_lock($1)', [SCHEMA_LOCK])
      await client.query(SCHEMA_TABLE)
      const { rows } = await client.query<{ v: number | null }>('select max(version) as v from cdb_schema')
      const found = rows[0]?.v ?? 0
      if (found > SCHEMA_VERSION) throw new StoreSchemaError(found, SCHEMA_VERSION)
      for (let v = found + 1; v <= SCHEMA_VERSION; v++) {
        for (const sql of MIGRATIONS[v - 1]) await client.query(sql)
        await client.query('insert into cdb_schema (version) values ($1)', [v])
      }
      await client.query('commit')
      if (found < SCHEMA_VERSION)
        this.log.info({ from: found, to: SCHEMA_VERSION }, 'contract-db schema migrated')
    } catch (err) {
      await client.query('rollback').catch(() => undefined)
      throw err
    } finally {
      client.release()
    }
  }
}

/** One transaction on its connection: reads go to the database (and into its read set), writes wait for the end. */
class PgTx implements CdbTx {
  private readonly writes = new Map<string, { table: Table; key: string; value?: unknown }>()

  constructor(private readonly client: pg.PoolClient) {}

  async contract(id: string) {
    const w = this.writes.get(slot('contracts', id))
    return w !== undefined ? (w.value as ContractRecord) : contractOf(this.client, id)
  }
  async account(peer: string) {
    const w = this.writes.get(slot('accounts', peer))
    return w !== undefined ? (w.value as Account) : accountOf(this.client, peer)
  }
  async approval(peer: string) {
    const w = this.writes.get(slot('approvals', peer))
    return w !== undefined ? (w.value as ApprovedEntity | undefined) : approvalOf(this.client, peer)
  }
  async credited() {
    const w = this.writes.get(slot('books', CREDITED))
    return w !== undefined ? (w.value as CreditedTotal) : creditedOf(this.client)
  }

  putContract(rec: ContractRecord): void {
    this.set('contracts', rec.contract.terms.contractId, rec)
  }
  putAccount(acc: Account): void {
    this.set('accounts', acc.peer, acc)
  }
  putApproval(e: ApprovedEntity): void {
    this.set('approvals', e.peer, e)
  }
  delApproval(peer: string): void {
    this.writes.set(slot('approvals', peer), { table: 'approvals', key: peer })
  }
  putCredited(total: CreditedTotal): void {
    this.set('books', CREDITED, total)
  }

  /**
   * Writes what was put: one statement per table, whatever the number of rows (a bulk copy or
   * a close's three accounts), rows in key order so that two instances lock them alike.
   */
  async flush(): Promise<void> {
    const by = new Map<Table, Array<{ key: string; value?: unknown }>>()
    for (const w of this.writes.values()) by.set(w.table, [...(by.get(w.table) ?? []), w])
    for (const [table, rows] of by) {
      rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      await writeRows(this.client, table, rows)
    }
  }

  private set(table: Table, key: string, value: unknown): void {
    // A copy: the caller may change its object after the write, and the write must not move.
    this.writes.set(slot(table, key), { table, key, value: structuredClone(value) })
  }
}

type Table = 'contracts' | 'accounts' | 'approvals' | 'books'
const slot = (table: Table, key: string) => `${table}\0${key}`

/** A time as the index holds it: a safe integer >= 0, anything else sorts last. */
const time = (ms: number) => (Number.isSafeInteger(ms) && ms >= 0 ? ms : Number.MAX_SAFE_INTEGER)

/** Upserts (or for approvals, deletes) `rows` of `table` in one statement each kind. */
async function writeRows(
  c: Queryable,
  table: Table,
  rows: Array<{ key: string; value?: unknown }>,
): Promise<void> {
  if (table === 'accounts') {
    const a = rows.map((r) => r.value as Account)
    await c.query(
      `insert into cdb_accounts (peer, balance, escrow)
       select * from unnest($1::text[], $2::bigint[], $3::bigint[])
       on conflict (peer) do update set balance = excluded.balance, escrow = excluded.escrow`,
      [a.map((x) => x.peer), a.map((x) => x.balance), a.map((x) => x.escrow)],
    )
  } else if (table === 'contracts') {
    const recs = rows.map((r) => r.value as ContractRecord)
    await c.query(
      `insert into cdb_contracts
         (id, state, requester, provider, escrow, paid, refunded, watch_from, activated_at, record)
       select id, state, requester, provider, escrow, paid, refunded, watch_from, activated_at, record::jsonb
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[],
         $8::bigint[], $9::bigint[], $10::text[])
         as u(id, state, requester, provider, escrow, paid, refunded, watch_from, activated_at, record)
       on conflict (id) do update set state = excluded.state, requester = excluded.requester,
         provider = excluded.provider, escrow = excluded.escrow, paid = excluded.paid,
         refunded = excluded.refunded, watch_from = excluded.watch_from,
         activated_at = excluded.activated_at, record = excluded.record`,
      [
        rows.map((r) => r.key),
        recs.map((r) => r.state),
        recs.map((r) => r.contract.terms.requester.peer),
        recs.map((r) => r.contract.terms.provider.peer),
        recs.map((r) => r.contract.terms.escrow),
        recs.map((r) => r.settlement?.paidToProvider ?? null),
        recs.map((r) => r.settlement?.refundedToRequester ?? null),
        recs.map((r) => time(watchFrom(r))),
        recs.map((r) => time(r.activatedAt)),
        recs.map((r) => JSON.stringify(r)),
      ],
    )
  } else if (table === 'approvals') {
    const gone = rows.filter((r) => r.value === undefined).map((r) => r.key)
    const put = rows.filter((r) => r.value !== undefined)
    if (gone.length > 0) await c.query('delete from cdb_approvals where peer = any($1::text[])', [gone])
    if (put.length > 0)
      await c.query(
        `insert into cdb_approvals (peer, record)
         select peer, record::jsonb from unnest($1::text[], $2::text[]) as u(peer, record)
         on conflict (peer) do update set record = excluded.record`,
        [put.map((r) => r.key), put.map((r) => JSON.stringify(r.value))],
      )
  } else
    for (const r of rows)
      await c.query(
        `insert into cdb_books (key, value) values ($1, $2::jsonb)
         on conflict (key) do update set value = excluded.value`,
        [r.key, JSON.stringify(r.value)],
      )
}

interface AccountRow {
  peer: string
  balance: string
  escrow: string
}

// bigint arrives as a string; the constraints keep it a safe integer, so Number is exact.
const accountRow = (r: AccountRow): Account => ({
  peer: r.peer,
  balance: Number(r.balance),
  escrow: Number(r.escrow),
})

async function contractOf(c: Queryable, id: string): Promise<ContractRecord | undefined> {
  const { rows } = await c.query<{ record: ContractRecord }>(
    'select record from cdb_contracts where id = $1',
    [id],
  )
  return rows[0]?.record
}

async function accountOf(c: Queryable, peer: string): Promise<Account | undefined> {
  const { rows } = await c.query<AccountRow>(
    'select peer, balance, escrow from cdb_accounts where peer = $1',
    [peer],
  )
  return rows[0] === undefined ? undefined : accountRow(rows[0])
}

async function approvalOf(c: Queryable, peer: string): Promise<ApprovedEntity | undefined> {
  const { rows } = await c.query<{ record: ApprovedEntity }>(
    'select record from cdb_approvals where peer = $1',
    [peer],
  )
  return rows[0]?.record
}

async function creditedOf(c: Queryable): Promise<CreditedTotal | undefined> {
  const { rows } = await c.query<{ value: CreditedTotal }>('select value from cdb_books where key = $1', [
    CREDITED,
  ])
  return rows[0]?.value
}
