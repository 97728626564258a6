/**
 * The expiry sweep over the store's index (specs/contract-db.md, "Storage backends"): the service
 * on a real level database, never started, on a manual clock. A sweep reads only the contracts
 * the index says may be due, never the whole table, and expires exactly those past `expiresAt`,
 * refunding their escrow; a contract started before its `startBy` moves on to its `settleBy`.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import type { ActorSystem } from '../../../actors/system.js'
import { DEADLINES, deadlinesOf } from '../../../dms/contract-db/deadlines.js'
import { ContractDbService } from '../../../dms/contract-db/service.js'
import { LevelContractDbStore } from '../../../dms/contract-db/store/level.js'
import type { ContractDbStore } from '../../../dms/contract-db/store/port.js'
import { silentLogger } from '../../../dms/log.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { makeContract, newParty, type Who } from '../../helpers/contracts.js'

/** The level store, counting its listings and the records its expiry index gives. */
function counted(inner: ContractDbStore) {
  const reads = { listings: 0, due: 0 }
  const store: ContractDbStore = {
    backend: inner.backend,
    open: () => inner.open(),
    transaction: (fn) => inner.transaction(fn),
    dueBy: async (now) => {
      const due = await inner.dueBy(now)
      reads.due += due.length
      return due
    },
    contract: (id) => inner.contract(id),
    account: (peer) => inner.account(peer),
    approval: (peer) => inner.approval(peer),
    credited: () => inner.credited(),
    contracts: (q) => (reads.listings++, inner.contracts(q)),
    page: (q) => (reads.listings++, inner.page(q)),
    countByState: () => (reads.listings++, inner.countByState()),
    accounts: () => inner.accounts(),
    approvals: () => inner.approvals(),
    books: () => inner.books(),
    activeVolunteers: (peer) => inner.activeVolunteers(peer),
  }
  return { store, reads }
}

describe('contract-db: the expiry sweep reads the index, not every contract', () => {
  let dir: string
  let db: Db
  let clock: ManualClock
  let cdb: Who
  let req: Who
  let prov: Who

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-cdb-expiry-'))
    db = await openDb(join(dir, 'db'))
    clock = new ManualClock(1_700_000_000_000)
    cdb = newParty()
    req = newParty()
    prov = newParty()
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('expires only the contracts past expiresAt, reading no listing, and refunds their escrow', async () => {
    const { store, reads } = counted(new LevelContractDbStore(db))
    const system = { peerId: cdb.peer } as unknown as ActorSystem
    const svc = new ContractDbService({ system, key: cdb.key, db, store, clock, log: silentLogger })
    await svc.openBooks()
    await svc.approve(req.peer)
    await svc.approve(prov.peer)
    await svc.credit(req.peer, 1000)
    const contract = (o: { startBy?: number } = {}) =>
      makeContract(req, prov, cdb.peer, {
        now: clock.now(),
        pricePerHour: 3600,
        maxDurationSeconds: 60,
        ...o,
      })

    const early = contract()
    const proof = await svc.verify(req.peer, early)
    clock.advance(10 * 60_000)
    const later = contract()
    await svc.verify(req.peer, later)
    const unstarted = contract({ startBy: clock.now() + 60_000 })
    await svc.verify(req.peer, unstarted)
    assert.equal((await svc.account(req.peer)).escrow, 180)

    const first = deadlinesOf((await svc.contract(proof.contractId))!, DEADLINES)
    // Before anything is due: the sweep reads no contract at all.
    clock.advance(first.settleBy - 1 - clock.now())
    const listings = reads.listings
    assert.deepEqual(await svc.expireDue(), [])
    assert.equal(reads.due, 0, 'a sweep with nothing due read a contract')
    // The first one is past its claim window, the unstarted one past its startBy: both expire.
    // The index also gives the later one (past its settleBy, in its claim window): it stays.
    clock.advance(first.expiresAt - clock.now())
    const expired = await svc.expireDue()
    assert.deepEqual(
      expired.map((r) => r.contract.terms.contractId).sort(),
      [early.terms.contractId, unstarted.terms.contractId].sort(),
    )
    assert.equal(reads.listings, listings, 'no sweep listed the contracts')
    assert.equal(reads.due, 3, 'the sweep read the three contracts past watchFrom, no other')
    assert.equal((await svc.contract(later.terms.contractId))?.state, 'active')
    assert.deepEqual(await svc.account(req.peer), { peer: req.peer, balance: 940, escrow: 60 })
    // A second sweep at the same time finds nothing left.
    assert.deepEqual(await svc.expireDue(), [])
  })
})
