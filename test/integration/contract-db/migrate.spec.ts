/**
 * `dms contract-db migrate` (specs/contract-db.md, "Migrating from level to PostgreSQL"), the
 * built CLI against a real throwaway cluster: a level contract-db with real history (the
 * service's own operations: approvals, credits, verify, settle, terminate, claim, a dispute,
 * expiry, one still active) is copied whole and checked; the password is never printed; a
 * non-empty target, a running source and a wrong data dir are refused; a copy that fails part way
 * leaves the target empty and the level data as it was.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { ManualClock } from '../../../actors/clock.js'
import type { ActorSystem } from '../../../actors/system.js'
import type { ContractRecord } from '../../../dms/contract-db/records.js'
import { ContractDbService } from '../../../dms/contract-db/service.js'
import { LevelContractDbStore } from '../../../dms/contract-db/store/level.js'
import type { ContractCursor } from '../../../dms/contract-db/store/page.js'
import type { ContractDbStore } from '../../../dms/contract-db/store/port.js'
import { PostgresContractDbStore } from '../../../dms/contract-db/store/postgres.js'
import { silentLogger } from '../../../dms/log.js'
import { openDb } from '../../../dms/store/db.js'
import { makeContract, makeReceipt, makeSettle, newParty } from '../../helpers/contracts.js'
import { startPostgres, type TestPostgres } from '../../helpers/postgres.js'
import { freshDatabase, type TestDatabase } from '../../helpers/postgres-db.js'

const exec = promisify(execFile)
const DEADLINES = { settleGraceMs: 1000, claimWindowMs: 60_000, disputeWindowMs: 120_000 }

interface Run {
  code: number
  stdout: string
  stderr: string
}

async function migrate(...args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/dms.js', 'contract-db', 'migrate', ...args])
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

/** Every record of a store, newest first, a page at a time. */
async function everything(store: ContractDbStore): Promise<ContractRecord[]> {
  const out: ContractRecord[] = []
  let after: ContractCursor | undefined
  do {
    const page = await store.page({ limit: 3, ...(after !== undefined ? { after } : {}) })
    out.push(...page.contracts)
    after = page.next
  } while (after !== undefined)
  return out
}

/** What a level store holds: for "untouched" (before and after a refused or failed run). */
async function levelBooks(dataDir: string) {
  const db = await openDb(join(dataDir, 'db'))
  try {
    const store = new LevelContractDbStore(db)
    return {
      contracts: await everything(store),
      accounts: await store.accounts(),
      approvals: await store.approvals(),
      credited: await store.credited(),
    }
  } finally {
    await db.close()
  }
}

describe('dms contract-db migrate (built CLI, real PostgreSQL)', function () {
  this.timeout(120_000)
  let cluster: TestPostgres | undefined
  let root: string
  let dataDir: string
  let target: TestDatabase
  let url: string
  let password: string
  let passwordFile: string
  const stores: PostgresContractDbStore[] = []

  before(async function () {
    cluster = await startPostgres()
    if (cluster === undefined) this.skip()
    root = await mkdtemp(join(tmpdir(), 'dms-cdb-migrate-'))
    dataDir = join(root, 'cdb')
    await makeHistory(dataDir)
  })
  after(async () => {
    await cluster?.stop()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })
  beforeEach(async () => {
    target = await freshDatabase(cluster!)
    // The URL without its password, which comes from a file (as store.passwordFile).
    const u = new URL(target.url)
    password = decodeURIComponent(u.password)
    u.password = ''
    url = u.toString()
    passwordFile = join(root, 'pgpass')
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 })
  })
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close()
    await target.drop()
  })

  const targetStore = async () => {
    const s = new PostgresContractDbStore({ url: target.url })
    stores.push(s)
    await s.open()
    return s
  }

  it('copies every approval, account, contract (claims, disputes, settlements) and total, checks them and prints the figures', async () => {
    const before = await levelBooks(dataDir)
    const run = await migrate('--data-dir', dataDir, '--to', url, '--password-file', passwordFile, '--json')
    assert.equal(run.code, 0, run.stderr)
    assert.doesNotMatch(run.stdout + run.stderr, new RegExp(password), 'the password is never printed')
    const report = JSON.parse(run.stdout) as {
      source: Record<string, unknown>
      target: Record<string, unknown>
      to: string
    }
    assert.deepEqual(report.target, report.source)
    assert.deepEqual(report.source, {
      contracts: { active: 1, settled: 1, terminated: 1, claimed: 1, expired: 1 },
      accounts: 2,
      approvals: 2,
      credited: 10_000,
      balances: 10_000 - 60,
      escrow: 60,
    })
    // Read back through the target's own store: the same records, whole, in the same order.
    const pgStore = await targetStore()
    assert.deepEqual(await everything(pgStore), before.contracts)
    assert.ok(
      before.contracts.some((r) => r.dispute !== undefined),
      'a disputed claim was copied',
    )
    assert.deepEqual(
      (await pgStore.accounts()).sort((a, b) => a.peer.localeCompare(b.peer)),
      before.accounts.sort((a, b) => a.peer.localeCompare(b.peer)),
    )
    assert.deepEqual(await pgStore.approvals(), before.approvals)
    assert.deepEqual(await pgStore.credited(), before.credited)
    assert.deepEqual(
      (await pgStore.dueBy(Number.MAX_SAFE_INTEGER)).length,
      1,
      'the active one is due some day',
    )
    assert.deepEqual(await levelBooks(dataDir), before, 'the level data is untouched')

    // The table, for a person.
    const again = await freshDatabase(cluster!)
    try {
      const table = await migrate('--data-dir', dataDir, '--to', again.url)
      assert.equal(table.code, 0, table.stderr)
      assert.match(table.stdout, /^FIGURE +LEVEL +POSTGRES\n/)
      assert.match(table.stdout, /\nescrow +60 +60\n/)
      assert.match(
        table.stdout,
        /every account's balance and escrow, every contract's state and settlement match/,
      )
      assert.match(table.stdout, /postgres:\/\/dms:\*\*\*@/)
      assert.doesNotMatch(table.stdout + table.stderr, new RegExp(password))
    } finally {
      await again.drop()
    }
  })

  it('refuses a target that holds books already, and changes neither side', async () => {
    const pgStore = await targetStore()
    await pgStore.transaction((tx) => tx.putAccount({ peer: 'someone', balance: 5, escrow: 0 }))
    const before = await levelBooks(dataDir)
    const run = await migrate('--data-dir', dataDir, '--to', url, '--password-file', passwordFile)
    assert.equal(run.code, 1)
    assert.match(
      run.stderr,
      /TARGET_NOT_EMPTY: the target database already holds contract-db books \(accounts\)/,
    )
    assert.deepEqual(await pgStore.accounts(), [{ peer: 'someone', balance: 5, escrow: 0 }])
    assert.deepEqual(await levelBooks(dataDir), before)
  })

  it('refuses a source whose contract-db runs (its database locked) and a data dir without one', async () => {
    const db = await openDb(join(dataDir, 'db'))
    try {
      const run = await migrate('--data-dir', dataDir, '--to', url, '--password-file', passwordFile)
      assert.equal(run.code, 1)
      assert.match(run.stderr, /the contract-db on .* is running: stop it first/)
    } finally {
      await db.close()
    }
    const none = await migrate('--data-dir', join(root, 'nothing'), '--to', url)
    assert.equal(none.code, 1)
    assert.match(none.stderr, /no contract-db data in .*nothing/)
    const notPg = await migrate('--data-dir', dataDir, '--to', 'mysql://x@y/z')
    assert.match(notPg.stderr, /--to must be a PostgreSQL URL/)
    // Nothing was created in the target by the refusals.
    const c = new pg.Client({ connectionString: target.url })
    await c.connect()
    try {
      const { rows } = await c.query(`select 1 from pg_tables where schemaname = current_schema()`)
      assert.equal(rows.length, 0)
    } finally {
      await c.end()
    }
  })

  it('a copy that fails part way leaves the target empty and the level data as it was', async () => {
    const pgStore = await targetStore()
    // The database refuses the expired contract mid-copy, as a full disk or a lost server would.
    const c = new pg.Client({ connectionString: target.url })
    await c.connect()
    try {
      await c.query(`create function refuse() returns trigger language plpgsql as $$
        begin if new.state = 'expired' then raise exception 'disk full'; end if; return new; end $$`)
      await c.query(
        `create trigger refuse before insert on cdb_contracts for each row execute function refuse()`,
      )
    } finally {
      await c.end()
    }
    const before = await levelBooks(dataDir)
    const run = await migrate('--data-dir', dataDir, '--to', url, '--password-file', passwordFile)
    assert.equal(run.code, 1)
    assert.match(run.stderr, /migration to .* failed: disk full/)
    assert.match(run.stderr, /the target was emptied again; the level data is untouched/)
    assert.deepEqual(await pgStore.accounts(), [])
    assert.deepEqual(await pgStore.approvals(), [])
    assert.deepEqual(await pgStore.countByState(), {})
    assert.deepEqual(await levelBooks(dataDir), before)
  })
})

/** A level contract-db with one contract in each state, a dispute, and money in each place. */
async function makeHistory(dataDir: string): Promise<void> {
  const db = await openDb(join(dataDir, 'db'))
  try {
    const clock = new ManualClock(1_700_000_000_000)
    const cdb = newParty()
    const req = newParty()
    const prov = newParty()
    const svc = new ContractDbService(
      {
        system: { peerId: cdb.peer } as unknown as ActorSystem,
        key: cdb.key,
        db,
        clock,
        log: silentLogger,
      },
      { deadlines: DEADLINES },
    )
    await svc.openBooks()
    await svc.approve(req.peer)
    await svc.approve(prov.peer)
    await svc.credit(req.peer, 10_000)
    const contract = () => {
      clock.advance(1)
      return makeContract(req, prov, cdb.peer, {
        now: clock.now(),
        pricePerHour: 3600,
        maxDurationSeconds: 60,
      })
    }
    const [settled, terminated, claimed, expired] = [contract(), contract(), contract(), contract()]
    for (const c of [settled, terminated, claimed, expired]) await svc.verify(req.peer, c)
    clock.advance(10_000)
    await svc.settle(prov.peer, makeSettle(settled, req, prov, { wallSeconds: 10 }))
    await svc.terminate(req.peer, { contractId: terminated.terms.contractId, reason: 'REQUESTER_CANCELLED' })
    const rec = (await svc.contract(claimed.terms.contractId))!
    clock.advance(rec.settleBy! + 1 - clock.now())
    await svc.terminate(prov.peer, {
      contractId: claimed.terms.contractId,
      reason: 'REQUESTER_SILENT',
      receipt: makeReceipt(claimed, prov, { wallSeconds: 30 }),
    })
    // The requester disputes the claim (its settle, within the dispute window).
    await svc
      .settle(req.peer, makeSettle(claimed, req, prov, { wallSeconds: 30, verified: false }))
      .catch(() => undefined)
    clock.advance(DEADLINES.claimWindowMs + 1)
    await svc.expireDue()
    await svc.verify(req.peer, contract())
    const states = (await svc.contractCounts()) as Record<string, number>
    assert.deepEqual(states, { active: 1, settled: 1, terminated: 1, claimed: 1, expired: 1 })
  } finally {
    await db.close()
  }
}
