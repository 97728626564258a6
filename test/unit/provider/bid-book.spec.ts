/**
 * The bid book over a real level database (fake runs, ManualClock): every transition stored in
 * order, a restart restores each live bid where it was (once), and the look-ups follow the
 * machines.
 */
import { container } from '../../helpers/workload.js'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from 'xstate'
import { ManualClock } from '../../../actors/clock.js'
import type { HistoryEntry } from '../../../dms/provider/bid-context.js'
import { flatState, type StoredBid } from '../../../dms/provider/bid-store.js'
import { bidContext, contractFor, Fakes, REQUESTER, testBook } from '../../helpers/provider-fakes.js'

describe('provider/bid-book', () => {
  let clock: ManualClock
  let dir: string
  beforeEach(async () => {
    clock = new ManualClock()
    dir = await mkdtemp(join(tmpdir(), 'dms-book-'))
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('stores every step of a bid, in order, and tells its listeners what each added', async () => {
    const fakes = new Fakes()
    const t = await testBook(clock, fakes, { dir })
    const seen: Array<[string, string[]]> = []
    t.book.onTransition((rec: StoredBid, added: HistoryEntry[]) =>
      seen.push([rec.state, added.map((h) => h.state)]),
    )
    const actor = await t.book.create(bidContext(clock.now()))
    assert.equal((await t.book.get('bid-1'))?.state, 'reserved')
    actor.send({ type: 'LOCK' })
    await waitFor(actor, (s) => s.matches('locked'))
    actor.send({ type: 'SIGN', contractId: 'contract-1', contractHash: 'h' })
    await t.book.persisted('bid-1')
    assert.deepEqual(seen.map(([s]) => s).at(-1), 'contracted')
    assert.deepEqual(
      seen.flatMap(([, added]) => added),
      ['reserved', 'locked', 'contracted'],
      'each step reported once',
    )
    await t.close()
  })

  it('restores each live bid where it was after a restart, and keeps ended ones out of memory', async () => {
    const fakes = new Fakes()
    let t = await testBook(clock, fakes, { dir })
    const a = await t.book.create(bidContext(clock.now(), { bidId: 'a', jobId: 'job-a' }))
    a.send({ type: 'LOCK' })
    await waitFor(a, (s) => s.matches('locked'))
    a.send({ type: 'SIGN', contractId: 'contract-a', contractHash: 'h' })
    a.send({
      type: 'INVOKE',
      allocation: {
        allocationId: 'alloc-a',
        contract: contractFor(a.getSnapshot().context.bid),
        workload: container({ image: 'dms-test:1', command: ['x'], cpu: 1, memoryBytes: 64 * 1024 * 1024 }),
        inputs: [],
      },
    })
    await waitFor(a, (s) => s.matches({ active: 'provisioning' }))
    fakes.runs.get('alloc-a')!.started()
    await waitFor(a, (s) => s.matches({ active: 'running' }))
    const b = await t.book.create(bidContext(clock.now(), { bidId: 'b', jobId: 'job-b' }))
    b.send({ type: 'RELEASE', reason: 'given up by its requester' })
    await waitFor(b, (s) => s.status === 'done')
    await t.book.persisted('a')
    await t.close()

    const again = new Fakes()
    t = await testBook(clock, again, { dir })
    assert.equal(t.book.size, 1, 'only the live bid gets a machine')
    assert.deepEqual(again.calls, ['execute alloc-a restored in running'])
    assert.equal((await t.book.get('b'))?.state, 'released')
    assert.equal(t.book.byContractId('contract-a')?.requester, REQUESTER)
    assert.deepEqual(t.book.allocationStates(), { running: 1 })
    again.runs.get('alloc-a')!.finish()
    await waitFor(t.book.actor('a')!, (s) => s.status === 'done')
    const history = (await t.book.get('a'))!.snapshot.context.history.map((h) => h.state)
    assert.deepEqual(
      history.filter((s) => s === 'running'),
      ['running'],
      'no second running step',
    )
    await t.close()
  })

  it('a reserved bid given up is stored twice (reserved, released); stored reserved, it is released at its expiry after a restart', async () => {
    // The ledger's release takes a while (a level write): it ends when the test says.
    let released!: () => void
    const fakes = new Fakes({
      lock: () => Promise.resolve(undefined as never),
      allocate: () => Promise.resolve(undefined as never),
      release: () => new Promise<boolean>((r) => (released = () => r(true))),
    })
    let t = await testBook(clock, fakes, { dir })
    const stored: string[] = []
    t.book.onTransition((rec: StoredBid) => stored.push(rec.state))
    const a = await t.book.create(bidContext(clock.now(), { bidId: 'a', jobId: 'job-a' }))
    a.send({ type: 'RELEASE', reason: 'given up by its requester' })
    await waitFor(a, (s) => s.matches('withdrawn'))
    await t.book.persisted('a')
    released()
    await waitFor(a, (s) => s.status === 'done')
    await t.book.persisted('a')
    assert.deepEqual(stored, ['reserved', 'released'])
    assert.deepEqual(
      (await t.book.get('a'))!.snapshot.context.history.map((h) => h.state),
      ['reserved', 'withdrawn', 'released'],
      'the history still has every step',
    )
    // A crash between the release and the released record leaves the bid stored reserved.
    await t.book.create(bidContext(clock.now(), { bidId: 'b', jobId: 'job-b' }))
    await t.close()
    const again = new Fakes()
    t = await testBook(clock, again, { dir })
    const b = t.book.actor('b')!
    assert.equal(flatState(b.getSnapshot().value), 'reserved')
    clock.advance(30_000)
    await waitFor(b, (s) => s.status === 'done')
    await t.book.persisted('b')
    assert.equal((await t.book.get('b'))?.state, 'released')
    assert.deepEqual(again.calls, ['release b'])
    await t.close()
  })

  it('a lock is stored once it is made (not while the ledger locks): stopped mid-lock, the bid is restored reserved', async () => {
    const fakes = new Fakes()
    let t = await testBook(clock, fakes, { dir })
    const states: string[] = []
    t.book.onTransition((rec) => states.push(rec.state))
    const actor = await t.book.create(bidContext(clock.now()))
    fakes.holdLocks = true
    actor.send({ type: 'LOCK' })
    await waitFor(actor, (s) => s.matches('locking'))
    await t.book.persisted('bid-1')
    assert.deepEqual(states, ['reserved'], '`locking` is not written')
    await t.close()

    const again = new Fakes()
    t = await testBook(clock, again, { dir })
    const restored = t.book.actor('bid-1')!
    assert.equal(flatState(restored.getSnapshot().value), 'reserved')
    // Its expiry releases it, and with it whatever the ledger had locked for it.
    await clock.advanceAsync(30_000)
    await waitFor(restored, (s) => s.status === 'done')
    assert.deepEqual(again.calls, ['release bid-1'])
    await t.close()
  })

  it('knows the open bid of a job and what each requester holds', async () => {
    const fakes = new Fakes()
    const t = await testBook(clock, fakes, { dir })
    const a = await t.book.create(bidContext(clock.now(), { bidId: 'a', jobId: 'job-a' }))
    await t.book.create(bidContext(clock.now(), { bidId: 'b', jobId: 'job-b' }, 'someone-else'))
    assert.equal(t.book.openBid('job-a', REQUESTER)?.bidId, 'a')
    assert.equal(t.book.openBid('job-a', 'someone-else'), undefined)
    assert.equal(t.book.holdings(REQUESTER).length, 1)
    a.send({ type: 'LOCK' })
    await waitFor(a, (s) => s.matches('locked'))
    assert.equal(t.book.openBid('job-a', REQUESTER), undefined, 'a locked bid is not offered again')
    await clock.advanceAsync(30_000)
    assert.equal(t.book.openBid('job-b', 'someone-else'), undefined, 'expired')
    await t.close()
  })

  /** Ends a new bid (given up by its requester) after taking it to `contracted`. */
  const ended = async (t: Awaited<ReturnType<typeof testBook>>, id: string) => {
    const a = await t.book.create(bidContext(clock.now(), { bidId: id, jobId: `job-${id}` }))
    a.send({ type: 'LOCK' })
    await waitFor(a, (s) => s.matches('locked'))
    a.send({ type: 'SIGN', contractId: `contract-${id}`, contractHash: 'h' })
    a.send({ type: 'RELEASE', reason: 'given up by its requester' })
    await waitFor(a, (s) => s.status === 'done')
    await t.book.persisted(id)
  }

  it('keeps at most retainEndedCount ended bids: the oldest records go, and their contract look-ups', async () => {
    const t = await testBook(clock, new Fakes(), { dir, retention: { retainEndedCount: 3 } })
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      await ended(t, id)
      await clock.advanceAsync(1)
    }
    const live = await t.book.create(bidContext(clock.now(), { bidId: 'live', jobId: 'job-live' }))
    assert.equal(await t.book.prune(), 2)
    assert.deepEqual((await t.book.values()).map((r) => r.bidId).sort(), ['c', 'd', 'e', 'live'])
    assert.equal(t.book.byContractId('contract-a'), undefined)
    assert.equal(t.book.byContractId('contract-e')?.bidId, 'e')
    assert.equal(await t.book.prune(), 0)
    live.send({ type: 'RELEASE', reason: 'given up' })
    await t.close()
  })

  it('deletes ended bids older than retainEndedMs, live ones never', async () => {
    const t = await testBook(clock, new Fakes(), { dir, retention: { retainEndedMs: 60_000 } })
    await ended(t, 'old')
    await clock.advanceAsync(30_000)
    await ended(t, 'recent')
    const live = await t.book.create(
      bidContext(clock.now(), { bidId: 'live', jobId: 'job-live', expiresAt: clock.now() + 3_600_000 }),
    )
    await clock.advanceAsync(30_000)
    assert.equal(await t.book.prune(), 1)
    assert.deepEqual((await t.book.values()).map((r) => r.bidId).sort(), ['live', 'recent'])
    await clock.advanceAsync(30_000)
    assert.equal(await t.book.prune(), 1)
    assert.equal(t.book.actor('live') !== undefined, true)
    live.send({ type: 'RELEASE', reason: 'given up' })
    await t.close()
  })
})
