/**
 * The data plane's fetch deadline on a simulated clock: a peer that answers every chunk, each just
 * inside the per-chunk timeout, cannot hold a fetch open past its overall deadline (the trickled
 * archive of the red-team run); the partial blob is dropped.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Actor } from '../../../actors/actor.js'
import { ManualClock } from '../../../actors/clock.js'
import { BlobService, type ChunkRequest } from '../../../dms/blobs/service.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { fetchBlobs, transferBudgetMs } from '../../../dms/blobs/transfer.js'
import { silentLogger } from '../../../dms/log.js'
import type { Handle } from '../../../actors/envelope.js'
import { openDb, type Db } from '../../../dms/store/db.js'

const CHUNK_MS = 5000
/** Never dialled: the fake actor answers. */
const PEER = { peer: 'peer', inbox: 'blobs', addrs: [], publicKey: new Uint8Array() } as unknown as Handle

describe('blobs/transfer: the overall fetch deadline', function () {
  let dir: string
  let db: Db
  let blobs: BlobService
  const content = Buffer.from('sixteen bytes!!!')
  const ref = { sha256: createHash('sha256').update(content).digest('hex'), size: 16 }

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dms-transfer-'))
    const store = new BlobStore({ dir: join(dir, 'blobs') })
    await store.start()
    db = await openDb(join(dir, 'db'))
    blobs = new BlobService({ store, db, log: silentLogger, now: () => 1 }, { chunkBytes: 4 })
  })
  afterEach(async function () {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** A peer's `blobs` actor answering every chunk in full, each CHUNK_MS after it was asked. */
  function slowPeer(clock: ManualClock) {
    const asked: ChunkRequest[] = []
    const aborted: number[] = []
    const actor = {
      request: (_to: unknown, _b: unknown, req: ChunkRequest, o: { signal?: AbortSignal }) =>
        new Promise((resolve, reject) => {
          asked.push(req)
          let answered = false
          const t = clock.setTimeout(() => {
            answered = true
            resolve({ size: 16, data: content.subarray(req.offset, req.offset + req.length) })
          }, CHUNK_MS)
          o.signal?.addEventListener('abort', () => {
            if (answered) return
            clock.clearTimeout(t)
            aborted.push(clock.now())
            reject(o.signal?.reason as Error)
          })
        }),
    } as unknown as Actor
    return { actor, asked, aborted }
  }

  /** Fires each chunk's answer as it is asked for, until `fetch` settles. */
  async function drive(clock: ManualClock, fetch: Promise<unknown>): Promise<void> {
    let settled = false
    void fetch.then(
      () => (settled = true),
      () => (settled = true),
    )
    while (!settled) {
      await Promise.race([clock.scheduled(CHUNK_MS), fetch.catch(() => {})])
      if (!settled) clock.advance(CHUNK_MS)
      await new Promise((r) => setImmediate(r))
    }
  }

  it('a peer slower than the minimum rate: the fetch ends at its deadline with TRANSFER_TOO_SLOW', async function () {
    const clock = new ManualClock(1_000_000)
    const { actor, asked, aborted } = slowPeer(clock)
    const pace = { minBytesPerSecond: 2, graceMs: 4000 } // 16 bytes: 4 s + 8 s = 12 s, not the 20 s it takes
    const budgetMs = transferBudgetMs(16, pace)
    assert.equal(budgetMs, 12_000)
    const fetch = fetchBlobs(actor, blobs, PEER, [ref], {
      timeoutMs: 10 * CHUNK_MS, // every chunk comes well within the per-chunk timeout
      deadline: { at: clock.now() + budgetMs, clock, budgetMs },
    })
    await drive(clock, fetch)
    await assert.rejects(fetch, { code: 'TRANSFER_TOO_SLOW' })
    assert.deepEqual(aborted, [1_000_000 + 12_000], 'the chunk in flight is abandoned at the deadline')
    assert.equal(asked.length, 3)
    assert.equal(await blobs.store.has(ref.sha256), false, 'the partial blob is dropped')
    assert.equal(clock.pending, 0, 'no timer left behind')
  })

  it('the same peer within the deadline: the blob is fetched and its deadline timer cleared', async function () {
    const clock = new ManualClock(1_000_000)
    const { actor } = slowPeer(clock)
    const budgetMs = 4 * CHUNK_MS + 1
    const fetch = fetchBlobs(actor, blobs, PEER, [ref], {
      deadline: { at: clock.now() + budgetMs, clock, budgetMs },
    })
    await drive(clock, fetch)
    assert.deepEqual(await fetch, [ref.sha256])
    assert.equal(clock.pending, 0)
  })
})
