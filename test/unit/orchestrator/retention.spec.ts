/**
 * Retention on a real level database and blob store: ended jobs past the age or beyond the newest
 * N are deleted with their index keys, blobs no stored job uses and their grants; a job that is
 * not final, or runs here, is never pruned; a blob another stored job uses is kept.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { BlobService } from '../../../dms/blobs/service.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { silentLogger } from '../../../dms/log.js'
import type { JobState } from '../../../dms/orchestrator/job-record.js'
import { JobStore, type StoredJob } from '../../../dms/orchestrator/job-store.js'
import { Retention } from '../../../dms/orchestrator/retention.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { jobRecord, T0 } from '../../helpers/steps.js'

const DAY = 86_400_000

describe('orchestrator/retention', () => {
  let dir: string
  let db: Db
  let store: JobStore
  let blobs: BlobService
  let clock: ManualClock
  const live = new Set<string>()

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-retention-'))
    db = await openDb(join(dir, 'db'))
    store = new JobStore({ db, log: silentLogger })
    const bs = new BlobStore({ dir: join(dir, 'blobs') })
    await bs.start()
    blobs = new BlobService({ store: bs, db, log: silentLogger, now: () => T0 })
    clock = new ManualClock(T0 + 10 * DAY)
    live.clear()
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  const retention = () => new Retention({ store, blobs, clock, log: silentLogger }, (id) => live.has(id))

  async function job(id: string, state: JobState, ageDays: number, input?: string): Promise<StoredJob> {
    const r = jobRecord({
      id,
      createdAt: clock.now() - ageDays * DAY,
      winner: { bidId: 'b', provider: 'P', why: '' },
    })
    const j: StoredJob = {
      state,
      record: {
        ...r,
        spec: { ...r.spec, ...(input !== undefined ? { inputs: [{ path: 'a', sha256: input }] } : {}) },
      },
    }
    await store.write(j, undefined)
    return j
  }
  const ids = async () => (await store.values()).map((j) => j.record.id).sort()

  it('prunes ended jobs older than maxAgeDays, never a live one, with their unused blobs and grants', async () => {
    const shared = await blobs.store.put(Buffer.from('shared'))
    const own = await blobs.store.put(Buffer.from('own'))
    await blobs.grant('P', own)
    await job('old-done', 'completed', 5, own)
    await job('old-failed', 'failed', 5, shared)
    await job('old-running', 'running', 5, shared) // not final: kept, and keeps its blob
    await job('new-done', 'completed', 1)
    await job('old-cancelled-but-live', 'cancelled', 5)
    live.add('old-cancelled-but-live') // its machine still runs here: kept
    const r = await retention().prune({ maxAgeDays: 3 })
    assert.equal(r.pruned, 2)
    assert.deepEqual(await ids(), ['new-done', 'old-cancelled-but-live', 'old-running'])
    assert.equal(await blobs.store.has(own), false, 'no stored job uses it')
    assert.equal(await blobs.store.has(shared), true, 'a running job still uses it')
    await assert.rejects(blobs.serve('P', { sha256: own, offset: 0, length: 1 }))
    assert.equal((await store.page({ limit: 10 })).jobs.length, 3, 'index keys gone too')
  })

  it('keeps only the newest keepLast ended jobs; a repeat prunes nothing more', async () => {
    for (let i = 0; i < 6; i++) await job(`j${i}`, i % 2 === 0 ? 'completed' : 'failed', 6 - i)
    await job('live', 'bidding', 9)
    const removed: string[] = []
    const r = retention()
    r.onRemoved((j) => removed.push(j.record.id))
    assert.equal((await r.prune({ keepLast: 2 })).pruned, 4)
    assert.deepEqual(removed.sort(), ['j0', 'j1', 'j2', 'j3'])
    assert.deepEqual(await ids(), ['j4', 'j5', 'live'])
    assert.equal((await r.prune({ keepLast: 2 })).pruned, 0)
    assert.equal((await r.prune({})).pruned, 0, 'no policy: nothing')
  })
})
