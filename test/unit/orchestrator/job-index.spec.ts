/**
 * The job listing indexes on a real level database: pages through every stored job exactly once,
 * newest first, by state, by queue, by queue and state, and from a time; a state change moves a
 * job's keys in the same batch as its record; a store written without the index (0.1) is indexed
 * once at start.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { silentLogger } from '../../../dms/log.js'
import { decodeCursor } from '../../../dms/orchestrator/job-index.js'
import type { JobState } from '../../../dms/orchestrator/job-record.js'
import { JobStore, type StoredJob } from '../../../dms/orchestrator/job-store.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { jobRecord, T0 } from '../../helpers/steps.js'

const STATES: JobState[] = ['completed', 'failed', 'running', 'cancelled']

function job(i: number, state: JobState = STATES[i % STATES.length], queue?: string): StoredJob {
  const r = jobRecord({ id: `job-${String(i).padStart(4, '0')}`, createdAt: T0 + Math.floor(i / 3) })
  return { state, record: { ...r, spec: { ...r.spec, ...(queue !== undefined ? { queue } : {}) } } }
}

describe('orchestrator/job-index', () => {
  let dir: string
  let db: Db
  let store: JobStore

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-job-index-'))
    db = await openDb(join(dir, 'db'))
    store = new JobStore({ db, log: silentLogger })
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** Every page of a query, following `next`. */
  async function all(q: { state?: JobState; queue?: string; since?: number; limit: number }) {
    const seen: StoredJob[] = []
    let position: string | undefined
    let pages = 0
    for (;;) {
      const page = await store.page({ ...q, position })
      pages++
      assert.ok(page.jobs.length <= q.limit)
      seen.push(...page.jobs)
      if (page.next === undefined) return { seen, pages }
      position = decodeCursor(page.next)
      assert.ok(position !== undefined, 'a cursor decodes')
    }
  }
  const newestFirst = (jobs: StoredJob[]) =>
    [...jobs].sort((a, b) => b.record.createdAt - a.record.createdAt || (b.record.id < a.record.id ? -1 : 1))

  it('pages through every job exactly once, newest first (ties by id), with filters', async () => {
    const jobs = Array.from({ length: 250 }, (_, i) => job(i, undefined, i % 2 === 0 ? 'q-even' : undefined))
    for (const j of jobs) await store.write(j, undefined)

    const { seen, pages } = await all({ limit: 100 })
    assert.equal(pages, 3)
    assert.deepEqual(
      seen.map((j) => j.record.id),
      newestFirst(jobs).map((j) => j.record.id),
    )
    const failed = await all({ state: 'failed', limit: 7 })
    assert.deepEqual(
      failed.seen.map((j) => j.record.id),
      newestFirst(jobs.filter((j) => j.state === 'failed')).map((j) => j.record.id),
    )
    const even = await all({ queue: 'q-even', limit: 50 })
    assert.equal(even.seen.length, 125)
    const evenFailed = await all({ queue: 'q-even', state: 'failed', limit: 10 })
    assert.deepEqual(
      evenFailed.seen.map((j) => j.record.id),
      newestFirst(jobs.filter((j) => j.state === 'failed' && j.record.spec.queue === 'q-even')).map(
        (j) => j.record.id,
      ),
    )
    const recent = await all({ since: T0 + 80, limit: 100 })
    assert.deepEqual(
      recent.seen.map((j) => j.record.id),
      newestFirst(jobs.filter((j) => j.record.createdAt >= T0 + 80)).map((j) => j.record.id),
    )
    assert.equal((await store.index.count({ queue: 'q-even', state: 'completed' })) > 0, true)
  })

  it('a state change moves the job between state scopes; a removed job leaves every scope', async () => {
    const j = job(1, 'running', 'q')
    await store.write(j, undefined)
    const done: StoredJob = { ...j, state: 'completed' }
    await store.write(done, j)
    assert.equal((await all({ state: 'running', limit: 10 })).seen.length, 0)
    assert.equal((await all({ state: 'completed', queue: 'q', limit: 10 })).seen.length, 1)
    assert.equal((await all({ limit: 10 })).seen.length, 1, 'still listed once')
    await store.remove(done)
    for (const q of [{}, { state: 'completed' as const }, { queue: 'q' }])
      assert.equal((await all({ ...q, limit: 10 })).seen.length, 0)
    assert.equal(await store.get(j.record.id), undefined)
  })

  it('jobs stored without the index are indexed once by migrate()', async () => {
    // As dms 0.1 and main before the index stored them: the record alone.
    for (let i = 0; i < 30; i++) await store.repo.put(job(i).record.id, job(i))
    assert.equal((await all({ limit: 10 })).seen.length, 0)
    assert.equal(await store.migrate(), 30)
    assert.equal((await all({ limit: 10 })).seen.length, 30)
    assert.equal(await store.migrate(), 0, 'done once')
  })

  it('refuses a cursor it did not give', () => {
    assert.equal(decodeCursor('bm9wZQ'), undefined)
    assert.equal(decodeCursor(Buffer.from('000000000000001!a!b').toString('base64url')), undefined)
  })
})
