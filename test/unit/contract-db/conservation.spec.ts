/**
 * The credited total and the conservation check (specs/contract-db.md, "Conservation") over the
 * service and a real level database (no network: the service is never started). Credits add to
 * the total in the batch of the account; contracts move money between accounts and leave it; an
 * older database gets a total from its accounts at its first start; books that do not add up
 * (a store written past the ledger) show the difference.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import type { ActorSystem } from '../../../actors/system.js'
import type { CreditedTotal } from '../../../dms/contract-db/conservation.js'
import type { Account } from '../../../dms/contract-db/records.js'
import { ContractDbService } from '../../../dms/contract-db/service.js'
import { silentLogger } from '../../../dms/log.js'
import { openDb, Repo, type Db } from '../../../dms/store/db.js'
import { makeContract, makeSettle, newParty, type Who } from '../../helpers/contracts.js'

describe('contract-db: the credited total and the conservation check', () => {
  let dir: string
  let db: Db
  let clock: ManualClock
  let cdb: Who
  let svc: ContractDbService
  let req: Who
  let prov: Who

  const open = async () => {
    db = await openDb(join(dir, 'db'))
    // Only the peer id of the actor system is read while the service is not started.
    const system = { peerId: cdb.peer } as unknown as ActorSystem
    svc = new ContractDbService({ system, key: cdb.key, db, clock, log: silentLogger })
  }
  const restart = async () => {
    await db.close()
    await open()
  }
  const stored = () => new Repo<CreditedTotal>(db, 'cdb-books').get('credited')
  const accounts = () => new Repo<Account>(db, 'cdb-accounts')

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-cdb-books-'))
    clock = new ManualClock(1_700_000_000_000)
    cdb = newParty()
    req = newParty()
    prov = newParty()
    await open()
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('a new database starts at 0; each credit adds to the total; contracts move money but create none: green', async () => {
    await svc.openBooks()
    assert.deepEqual(await stored(), { credited: 0, initialisedAt: clock.now(), initialisedWith: 0 })
    await svc.approve(req.peer)
    await svc.approve(prov.peer)
    await svc.credit(req.peer, 1000)
    await svc.credit(prov.peer, 5)
    assert.equal((await stored())?.credited, 1005)

    // One contract stays active (its escrow locked), one settles (paid and refunded).
    const c = (n: number) =>
      makeContract(req, prov, cdb.peer, { now: clock.now() + n, pricePerHour: 3600, maxDurationSeconds: 60 })
    await svc.verify(req.peer, c(0))
    const settled = c(1)
    await svc.verify(req.peer, settled)
    clock.advance(30_000)
    await svc.settle(req.peer, makeSettle(settled, req, prov, { wallSeconds: 30 }))

    const check = await svc.conservation()
    assert.deepEqual(
      { ...check, since: undefined },
      {
        credited: 1005,
        balances: 1005 - 60,
        escrow: 60,
        difference: 0,
        ok: true,
        since: undefined,
        initialisedWith: 0,
        accounts: 2,
      },
    )
    assert.equal(check.since, 1_700_000_000_000)
    await restart()
    assert.equal((await svc.conservation()).credited, 1005, 'the total is stored, not counted')
  })

  it('a refused credit writes neither the account nor the total', async () => {
    await svc.openBooks()
    await svc.credit(req.peer, 10)
    await assert.rejects(svc.credit(req.peer, -5), { code: 'INVALID_AMOUNT' })
    await assert.rejects(svc.credit('not-a-peer', 5), { code: 'BAD_PEER_ID' })
    await assert.rejects(svc.credit(req.peer, Number.MAX_SAFE_INTEGER), { code: 'INVALID_AMOUNT' })
    assert.equal((await stored())?.credited, 10)
    assert.equal((await svc.account(req.peer)).balance, 10)
  })

  it('a database from before the total gets one from its accounts at its first start, checked from then on', async () => {
    // Accounts as an older contract-db stored them, with no total beside them.
    await accounts().put(req.peer, { peer: req.peer, balance: 700, escrow: 300 })
    await accounts().put(prov.peer, { peer: prov.peer, balance: 50, escrow: 0 })
    assert.equal(await stored(), undefined)
    clock.advance(5000)
    await svc.openBooks()
    const first = { credited: 1050, initialisedAt: clock.now(), initialisedWith: 1050 }
    assert.deepEqual(await stored(), first)
    await svc.credit(prov.peer, 25)
    assert.equal((await stored())?.credited, 1075)

    // A second start keeps the stored total: it is initialised once.
    clock.advance(5000)
    await restart()
    await svc.openBooks()
    assert.deepEqual(await stored(), { ...first, credited: 1075 })
    const check = await svc.conservation()
    assert.equal(check.ok, true)
    assert.equal(check.since, first.initialisedAt)
    assert.equal(check.initialisedWith, 1050)
  })

  it('a service embedded without openBooks starts its total before its first credit, not after', async () => {
    await accounts().put(req.peer, { peer: req.peer, balance: 40, escrow: 0 })
    await svc.credit(req.peer, 2)
    assert.deepEqual(await stored(), { credited: 42, initialisedAt: clock.now(), initialisedWith: 40 })
  })

  it('books that do not add up (a balance written past the ledger) are red, with the difference', async () => {
    await svc.openBooks()
    await svc.credit(req.peer, 100)
    assert.equal((await svc.conservation()).ok, true)
    // Test-only corruption: money that never came through a credit.
    await accounts().put(prov.peer, { peer: prov.peer, balance: 7, escrow: 0 })
    const more = await svc.conservation()
    assert.deepEqual([more.ok, more.difference, more.credited, more.balances], [false, 7, 100, 107])
    // And money gone missing.
    await accounts().put(prov.peer, { peer: prov.peer, balance: 0, escrow: 0 })
    await accounts().put(req.peer, { peer: req.peer, balance: 90, escrow: 0 })
    const less = await svc.conservation()
    assert.deepEqual([less.ok, less.difference], [false, -10])
  })
})
