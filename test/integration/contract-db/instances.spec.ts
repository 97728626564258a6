/**
 * Two contract-db instances over the same books racing the same operations (specs/contract-db.md,
 * "Several instances"): verify, settle, claim and expire one contract from both at once. The books
 * decide: one lock, one close, the provider paid once, money conserved. Over one level store shared
 * in this process (each service has its own queue, so their checks interleave as two processes'
 * would) and over one PostgreSQL database with a store per instance (real serializable conflicts).
 * The services are never started: their operations are called as their handlers would.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import type { ActorSystem } from '../../../actors/system.js'
import type { Settlement } from '../../../dms/contracts/model.js'
import { ContractDbService } from '../../../dms/contract-db/service.js'
import { LevelContractDbStore } from '../../../dms/contract-db/store/level.js'
import type { ContractDbStore } from '../../../dms/contract-db/store/port.js'
import { PostgresContractDbStore } from '../../../dms/contract-db/store/postgres.js'
import { silentLogger } from '../../../dms/log.js'
import { openDb } from '../../../dms/store/db.js'
import { makeContract, makeReceipt, makeSettle, newParty } from '../../helpers/contracts.js'
import { startPostgres, type TestPostgres } from '../../helpers/postgres.js'
import { freshDatabase } from '../../helpers/postgres-db.js'

/** Two stores over the same books, and what removes them. */
type Books = () => Promise<{ stores: [ContractDbStore, ContractDbStore]; cleanup: () => Promise<void> }>

const DEADLINES = { settleGraceMs: 1000, claimWindowMs: 60_000, disputeWindowMs: 120_000 }
const VOLUNTEERS = 2

function racing(name: string, books: () => Books) {
  describe(`two contract-db instances racing over ${name}`, function () {
    this.timeout(60_000)
    const cdb = newParty()
    const req = newParty()
    const prov = newParty()
    let clock: ManualClock
    let a: ContractDbService
    let b: ContractDbService
    let cleanup: () => Promise<void>
    let openOn: (store: ContractDbStore) => ContractDbService
    let first: ContractDbStore

    beforeEach(async () => {
      clock = new ManualClock(1_700_000_000_000)
      const { stores, cleanup: c } = await books()()
      cleanup = c
      // One identity (step A): every instance holds the contract-db's key.
      const system = { peerId: cdb.peer } as unknown as ActorSystem
      const open = (store: ContractDbStore) =>
        new ContractDbService(
          { system, key: cdb.key, db: undefined as never, store, clock, log: silentLogger },
          { deadlines: DEADLINES, maxActiveVolunteerContracts: VOLUNTEERS },
        )
      a = open(stores[0])
      b = open(stores[1])
      openOn = open
      first = stores[0]
      await Promise.all([a.openBooks(), b.openBooks()])
      await a.approve(req.peer)
      await b.approve(prov.peer)
      await a.credit(req.peer, 1000)
    })
    afterEach(async () => {
      await cleanup()
    })

    const contract = () =>
      makeContract(req, prov, cdb.peer, { now: clock.now(), pricePerHour: 3600, maxDurationSeconds: 60 })

    /** Money is where it should be, seen from both instances. */
    async function conserved(): Promise<void> {
      for (const svc of [a, b]) {
        const check = await svc.conservation()
        assert.deepEqual([check.ok, check.credited], [true, 1000])
      }
      const active = (await a.listContracts()).filter((r) => r.state === 'active')
      const locked = active.reduce((n, r) => n + r.contract.terms.escrow, 0)
      assert.equal((await b.account(req.peer)).escrow, locked)
    }

    /** The one settlement the answers carry (an answer, or a refusal's stored settlement). */
    function oneSettlement(results: PromiseSettledResult<Settlement>[]): Settlement {
      const seen = new Map<string, Settlement>()
      for (const r of results) {
        const s =
          r.status === 'fulfilled'
            ? r.value
            : (r.reason as { code?: string; data?: { settlement?: Settlement } }).data?.settlement
        if (r.status === 'rejected')
          assert.equal((r.reason as { code?: string }).code, 'CONTRACT_NOT_ACTIVE', String(r.reason))
        if (s !== undefined) seen.set(s.signature, s)
      }
      assert.equal(seen.size, 1, 'one close, told to every racer')
      assert.ok(results.some((r) => r.status === 'fulfilled'))
      return [...seen.values()][0]
    }

    it('verify on both: one lock, both answer the same proof', async () => {
      const c = contract()
      const [pa, pb] = await Promise.all([a.verify(req.peer, c), b.verify(req.peer, c)])
      assert.deepEqual(pa, pb)
      assert.deepEqual(await a.account(req.peer), { peer: req.peer, balance: 940, escrow: 60 })
      await conserved()
    })

    it('settle on both: one close, the provider paid once', async () => {
      const c = contract()
      await a.verify(req.peer, c)
      clock.advance(10_000)
      const s = makeSettle(c, req, prov, { wallSeconds: 10 })
      const results = await Promise.allSettled([
        a.settle(prov.peer, s),
        b.settle(req.peer, s),
        b.settle(prov.peer, s),
        a.terminate(req.peer, { contractId: c.terms.contractId, reason: 'REQUESTER_CANCELLED' }),
      ])
      const settlement = oneSettlement(results)
      assert.equal((await b.contract(c.terms.contractId))?.settlement?.signature, settlement.signature)
      assert.equal((await a.account(prov.peer)).balance, settlement.paidToProvider)
      assert.equal((await a.account(req.peer)).balance, 1000 - settlement.paidToProvider)
      await conserved()
    })

    it('claim on both past settleBy, expire on both past the claim window: each closes once', async () => {
      const claimed = contract()
      const expiring = contract()
      await a.verify(req.peer, claimed)
      await b.verify(req.peer, expiring)
      const rec = (await a.contract(claimed.terms.contractId))!
      clock.advance(rec.settleBy! + 1 - clock.now())
      const claim = () => ({
        contractId: claimed.terms.contractId,
        reason: 'REQUESTER_SILENT' as const,
        receipt: makeReceipt(claimed, prov, { wallSeconds: 30 }),
      })
      const claims = await Promise.allSettled([
        a.terminate(prov.peer, claim()),
        b.terminate(prov.peer, claim()),
      ])
      const paid = oneSettlement(claims).paidToProvider
      assert.equal((await b.contract(claimed.terms.contractId))?.state, 'claimed')
      clock.advance(DEADLINES.claimWindowMs + 1)
      const [ea, eb] = await Promise.all([a.expireDue(), b.expireDue()])
      const expired = [...ea, ...eb].map((r) => r.contract.terms.contractId)
      assert.deepEqual(expired, [expiring.terms.contractId])
      assert.equal((await a.account(prov.peer)).balance, paid)
      assert.deepEqual(await b.account(req.peer), { peer: req.peer, balance: 1000 - paid, escrow: 0 })
      await conserved()
    })

    it('the volunteer limit counts what both instances locked', async () => {
      const volunteer = () =>
        makeContract(req, prov, cdb.peer, { now: clock.now(), pricePerHour: 0, maxDurationSeconds: 60 })
      // b counts first (a per-process count would start here and see only b's own locks later).
      await b.verify(req.peer, volunteer())
      for (let i = 1; i < VOLUNTEERS; i++) await a.verify(req.peer, volunteer())
      await assert.rejects(b.verify(req.peer, volunteer()), { code: 'TOO_MANY_CONTRACTS' })
      await assert.rejects(a.verify(req.peer, volunteer()), { code: 'TOO_MANY_CONTRACTS' })
    })

    it('conservation is read in one snapshot: a credit by the other instance between its reads shows no difference', async () => {
      // An instance whose reads of the credited total let b credit right after: two separate
      // reads (the total, then the accounts) would see 1000 credited and 1005 held.
      const racy = new Proxy(first, {
        get(target, key) {
          if (key === 'credited')
            return async () => {
              const total = await target.credited()
              await b.credit(req.peer, 5)
              return total
            }
          const v = Reflect.get(target, key) as unknown
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
        },
      })
      const watcher = openOn(racy)
      const check = await watcher.conservation()
      assert.equal(check.difference, 0)
      assert.ok(check.ok)
      await b.credit(req.peer, 5)
      const after = await watcher.conservation()
      assert.deepEqual([after.ok, after.credited], [true, check.credited + 5])
    })
  })
}

racing('one level store', () => async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dms-cdb-two-'))
  const db = await openDb(join(dir, 'db'))
  const store = new LevelContractDbStore(db)
  return {
    stores: [store, store],
    cleanup: async () => {
      await db.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
})

describe('over PostgreSQL', function () {
  this.timeout(60_000)
  let cluster: TestPostgres | undefined
  before(async function () {
    cluster = await startPostgres()
    if (cluster === undefined) this.skip()
  })
  after(async () => {
    await cluster?.stop()
  })

  racing('one PostgreSQL database', () => async () => {
    const d = await freshDatabase(cluster!)
    const stores: [PostgresContractDbStore, PostgresContractDbStore] = [
      new PostgresContractDbStore({ url: d.url }),
      new PostgresContractDbStore({ url: d.url }),
    ]
    return {
      stores,
      cleanup: async () => {
        for (const s of stores) await s.close()
        await d.drop()
      },
    }
  })
})
