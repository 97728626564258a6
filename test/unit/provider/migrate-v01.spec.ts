/**
 * The migration of the provider's 0.1 records (test/fixtures/v0.1, written by real 0.1 nodes):
 * each bid, with its allocation, becomes one record of today's shape in the state its machine goes
 * on from, the 0.1 records are gone, a second run changes nothing, and the records restore.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { silentLogger } from '../../../dms/log.js'
import type { StoredBid } from '../../../dms/provider/bid-store.js'
import { fromV01, migrateV01, type V01Allocation, type V01Bid } from '../../../dms/provider/migrate-v01.js'
import { bidRecordOf, allocationOf } from '../../../dms/provider/views.js'
import type { LedgerEntry } from '../../../dms/resources/ledger.js'
import { openDb, Repo, type Db } from '../../../dms/store/db.js'
import {
  loadFixture,
  loadManifest,
  recordsOf,
  writeFixture,
  type NodeFixture,
} from '../../helpers/fixtures.js'
import { Fakes, testBook } from '../../helpers/provider-fakes.js'

describe('provider/migrate-v01: the 0.1 bid and allocation records', () => {
  let dir: string
  let db: Db
  let fixture: NodeFixture
  let capturedAt: number

  before(async () => {
    fixture = await loadFixture('v0.1', 'provider-0')
    capturedAt = (await loadManifest('v0.1')).capturedAt
  })
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-migrate-'))
    await writeFixture(fixture, dir)
    db = await openDb(join(dir, 'db'))
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  const ledger = () => recordsOf<LedgerEntry>(fixture, 'ledger')
  const migrate = () => migrateV01(db, { log: silentLogger, now: capturedAt + 1000, ledger: ledger() })

  it('moves each bid with its allocation to one record in the state it goes on from, in one batch', async () => {
    const bids = recordsOf<V01Bid>(fixture, 'provider-bids')
    assert.equal(await migrate(), bids.length)
    assert.deepEqual(await new Repo(db, 'provider-bids').values(), [], 'the 0.1 bids are gone')
    assert.deepEqual(await new Repo(db, 'allocations').values(), [], 'the 0.1 allocations are gone')
    const stored = await new Repo<StoredBid>(db, 'provider-machines').values()
    const byOld = new Map(bids.map((b) => [b.bid.bidId, b.state]))
    assert.deepEqual(stored.map((r) => [byOld.get(r.bidId), r.state, bidRecordOf(r).state]).sort(), [
      ['invoked', 'released', 'invoked'], // ran to its end in 0.1
      ['invoked', 'running', 'invoked'], // running when 0.1 stopped: re-attaches or is lost
      ['offered', 'reserved', 'offered'],
    ])
    const running = stored.find((r) => r.state === 'running')!
    assert.deepEqual(running.snapshot.value, { active: 'running' })
    const old = recordsOf<V01Allocation>(fixture, 'allocations').find((a) => a.state === 'running')!
    const view = allocationOf(running)!
    assert.equal(view.allocationId, old.allocationId)
    assert.deepEqual(view.history, old.history, 'the 0.1 steps are kept')
    assert.equal(running.snapshot.context.contractId, old.contract.terms.contractId)
    assert.equal(await migrate(), 0, 'a second run finds nothing of 0.1')
    assert.equal((await new Repo<StoredBid>(db, 'provider-machines').values()).length, stored.length)
  })

  it('maps every 0.1 bid state', () => {
    const [any] = recordsOf<V01Bid>(fixture, 'provider-bids')
    const lock: LedgerEntry = {
      ...ledger()[0],
      id: any.bid.bidId,
      state: 'locked',
      expiresAt: capturedAt + 50_000,
    }
    const as = (state: V01Bid['state'], l?: LedgerEntry) =>
      fromV01({ bid: { ...any, state }, ledger: l }, capturedAt)
    assert.equal(as('offered').state, 'reserved')
    const locked = as('locked', lock)
    assert.equal(locked.state, 'locked')
    assert.equal(locked.snapshot.context.invokeBy, capturedAt + 50_000, 'the lock keeps its deadline')
    assert.equal(as('contracted', lock).state, 'contracted')
    assert.equal(as('invoked').state, 'expired', 'invoked without an allocation: released')
    assert.equal(bidRecordOf(as('expired')).state, 'expired')
    assert.equal(bidRecordOf(as('released')).state, 'released')
  })

  it('restored, the offered bid waits for its lock until its own expiry, the running one re-attaches', async () => {
    await migrate()
    const clock = new ManualClock(capturedAt + 1000)
    const fakes = new Fakes()
    const t = await testBook(clock, fakes, { db, dir })
    try {
      const stored = await t.book.values()
      const offered = stored.find((r) => r.state === 'reserved')!
      const running = stored.find((r) => r.state === 'running')!
      assert.deepEqual(fakes.calls, [`execute ${allocationOf(running)!.allocationId} restored in running`])
      assert.equal(t.book.size, 2, 'the ended bid is not restored')
      await clock.advanceAsync(offered.snapshot.context.bid.expiresAt - clock.now())
      await t.book.persisted(offered.bidId)
      assert.equal((await t.book.get(offered.bidId))?.state, 'released')
    } finally {
      await t.close()
    }
  })
})
