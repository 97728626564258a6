/**
 * The provider's kept output archives (kept-archives.ts) over a real level database, a real blob
 * store and grants, real books with contract-db-signed settlements, and a manual clock: an
 * archive is kept until its settlement plus `keepMs` and deleted then; the deadline survives a
 * restart; per requester the oldest settled archives go first past the bound; a requester's own
 * release leaves nothing to do.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { BlobService } from '../../../dms/blobs/service.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { signDoc } from '../../../dms/contracts/canonical.js'
import { DOMAIN, type ContractProof, type SignedContract } from '../../../dms/contracts/model.js'
import { silentLogger } from '../../../dms/log.js'
import { ProviderBooks } from '../../../dms/provider/books.js'
import { KeptArchives, type KeptArchivesInit } from '../../../dms/provider/kept-archives.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { makeContract, newParty, type Who } from '../../helpers/contracts.js'
import { tarOf } from '../../helpers/tar.js'

const T0 = 1_800_000_000_000
const HOUR = 3_600_000

describe('provider/kept-archives (issue 29)', () => {
  const cdb = newParty()
  const prov = newParty()
  const alice = newParty()
  const bob = newParty()
  let dir: string
  let db: Db
  let clock: ManualClock
  let blobs: BlobService
  let books: ProviderBooks
  let archives: KeptArchives

  /** The provider's parts over the same database and folder, as a (re)started node has them. */
  async function startParts(init: KeptArchivesInit = { keepMs: HOUR }) {
    const store = new BlobStore({ dir: join(dir, 'blobs') })
    await store.start()
    blobs = new BlobService({
      store,
      db,
      log: silentLogger,
      now: () => clock.now(),
      deferRelease: (r) => archives.deferred(r),
    })
    books = new ProviderBooks({
      db,
      clock,
      log: silentLogger,
      contractDb: cdb.peer,
      claim: () => Promise.reject(new Error('no claim here')),
    })
    archives = new KeptArchives({ db, clock, log: silentLogger, blobs, books }, init)
    await archives.start()
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-kept-archives-'))
    db = await openDb(join(dir, 'db'))
    clock = new ManualClock(T0)
    await startParts()
  })
  afterEach(async () => {
    archives.stop()
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** A run for `who`: its contract invoked, its archive (`kib` KiB) published as the publish step does. */
  async function run(who: Who, kib = 64): Promise<{ c: SignedContract; sha256: string }> {
    const c = makeContract(who, prov, cdb.peer, {
      now: clock.now(),
      pricePerHour: 3600,
      maxDurationSeconds: 60,
    })
    await books.invoked(c, {
      contractId: c.terms.contractId,
      settleBy: clock.now() + 60_000,
    } as ContractProof)
    const tar = await tarOf(join(blobs.store.tmpDir, `${c.terms.contractId}.tar`), [
      { path: 'out', content: randomBytes(kib * 1024) },
    ])
    const archive = { file: tar.file, sha256: tar.sha256, size: tar.size }
    const t = c.terms
    const kept = { contractId: t.contractId, jobId: t.jobId, requester: who.peer }
    await archives.published({ ...kept, sha256: tar.sha256, size: tar.size })
    await blobs.publishArchive(who.peer, archive, t.jobId)
    return { c, sha256: tar.sha256 }
  }

  async function settle(c: SignedContract): Promise<void> {
    const body = {
      contractId: c.terms.contractId,
      outcome: 'settled' as const,
      paidToProvider: 10,
      refundedToRequester: c.terms.escrow - 10,
      billedSeconds: 1,
      settledAt: clock.now(),
      contractDb: cdb.peer,
    }
    assert.equal(await books.settled({ ...body, signature: signDoc(cdb.key, DOMAIN.settlement, body) }), true)
    await settledOf(c)
  }
  /** Waits for the keeper to take the settlement (the books tell it by an event). */
  async function settledOf(c: SignedContract): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if (archives.list().find((a) => a.contractId === c.terms.contractId)?.releaseAt !== undefined) return
      await new Promise((r) => setImmediate(r))
    }
    assert.fail('the settlement did not reach the keeper')
  }
  const granted = (who: Who, sha256: string) =>
    blobs.serve(who.peer, { sha256, offset: 0, length: 1 }).then(
      () => true,
      () => false,
    )

  it('keeps an archive until its settlement plus keepMs, then revokes its grant and deletes it', async () => {
    const { c, sha256 } = await run(alice)
    clock.advance(5 * HOUR)
    assert.ok(await blobs.store.has(sha256), 'no deadline before the settlement')
    await settle(c)
    await clock.advanceAsync(HOUR - 1)
    assert.ok(await blobs.store.has(sha256), 'kept within the window')
    assert.equal(await granted(alice, sha256), true)
    await clock.advanceAsync(1)
    await archives.idle()
    assert.equal(await blobs.store.has(sha256), false, 'deleted at settlement + keepMs')
    assert.equal(await granted(alice, sha256), false)
    assert.deepEqual(archives.list(), [])
  })

  it('a deadline survives a restart: stored, re-armed at start, and one passed while down is released at the next start', async () => {
    const a = await run(alice)
    const b = await run(alice)
    await settle(a.c)
    clock.advance(HOUR / 2)
    await settle(b.c)
    archives.stop()
    await startParts()
    await clock.advanceAsync(HOUR / 2)
    await archives.idle()
    assert.equal(await blobs.store.has(a.sha256), false, 'the first deadline, re-armed after the restart')
    assert.ok(await blobs.store.has(b.sha256))
    // Down past the second deadline: released at the next start.
    archives.stop()
    clock.advance(HOUR)
    await startParts()
    assert.equal(await blobs.store.has(b.sha256), false)
  })

  it('a settlement the books kept while the keeper missed it gets its deadline at start', async () => {
    const { c, sha256 } = await run(alice)
    archives.stop()
    const body = {
      contractId: c.terms.contractId,
      outcome: 'settled' as const,
      paidToProvider: 0,
      refundedToRequester: c.terms.escrow,
      billedSeconds: 0,
      settledAt: clock.now(),
      contractDb: cdb.peer,
    }
    await books.settled({ ...body, signature: signDoc(cdb.key, DOMAIN.settlement, body) })
    await startParts()
    assert.equal(archives.list()[0]?.releaseAt, clock.now() + HOUR)
    await clock.advanceAsync(HOUR)
    await archives.idle()
    assert.equal(await blobs.store.has(sha256), false)
  })

  it("past a requester's bound its oldest settled archives are released first; others' are not touched", async () => {
    archives.stop()
    // Room for two of alice's 64 KiB archives (each a little more with its tar headers).
    await startParts({ keepMs: HOUR, maxBytesPerRequester: 150 * 1024 })
    const first = await run(alice)
    const second = await run(alice)
    const bobs = await run(bob)
    await settle(second.c)
    clock.advance(1000)
    await settle(first.c)
    clock.advance(1000)
    const third = await run(alice)
    await archives.idle()
    assert.equal(await blobs.store.has(second.sha256), false, 'the oldest settled went')
    assert.ok(await blobs.store.has(first.sha256))
    assert.ok(await blobs.store.has(third.sha256), 'not settled yet: kept')
    assert.ok(await blobs.store.has(bobs.sha256), "another requester's")
    assert.ok(archives.bytesOf(alice.peer) <= 150 * 1024)
  })

  it("a requester's release before the settlement is put off until it (the contract-db may check the archive)", async () => {
    const { c, sha256 } = await run(alice)
    assert.deepEqual(await blobs.release(alice.peer, sha256, c.terms.jobId), { removed: false })
    assert.ok(await blobs.store.has(sha256), 'kept until the settlement')
    assert.equal(await granted(alice, sha256), true)
    await settle(c)
    await archives.idle()
    await clock.advanceAsync(0)
    await archives.idle()
    assert.equal(await blobs.store.has(sha256), false, 'released at the settlement, not keepMs later')
    assert.deepEqual(archives.list(), [])
  })

  it("a requester's own release leaves no deadline to keep", async () => {
    const { c, sha256 } = await run(alice)
    await settle(c)
    await blobs.release(alice.peer, sha256, c.terms.jobId)
    await archives.idle()
    assert.deepEqual(archives.list(), [])
    assert.equal(clock.pending, 0, 'no timer left')
    assert.equal(await blobs.store.has(sha256), false)
  })
})
