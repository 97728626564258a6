/**
 * The queue book on a real level database, its jobs a fake (their changes are emitted by the test,
 * as the job store would after each write), time on a ManualClock: counts follow every change,
 * drain refuses new jobs and ends with the last live one, cancel cancels every live job (and any
 * joining late), idle queues expire, and a restarted book recounts from the jobs.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../../actors/clock.js'
import { DmsError } from '../../../../actors/errors.js'
import { silentLogger } from '../../../../dms/log.js'
import type { JobState } from '../../../../dms/orchestrator/job-record.js'
import { FINAL_STATES, type StoredJob } from '../../../../dms/orchestrator/job-store.js'
import { QueueBook, type QueueJobs } from '../../../../dms/orchestrator/queues/queue-book.js'
import { openDb, type Db } from '../../../../dms/store/db.js'
import { jobRecord, T0 } from '../../../helpers/steps.js'

/** Jobs as the book sees them: a change listener, the per-queue index, cancel. */
class FakeJobs implements QueueJobs {
  readonly jobs = new Map<string, StoredJob>()
  readonly cancelled: string[] = []
  private readonly fns = new Set<(j: StoredJob) => void>()
  onChange(fn: (j: StoredJob) => void) {
    this.fns.add(fn)
    return () => this.fns.delete(fn)
  }
  ids(queue: string, state: JobState) {
    return Promise.resolve(
      [...this.jobs.values()]
        .filter((j) => j.record.spec.queue === queue && j.state === state)
        .map((j) => j.record.id),
    )
  }
  async count(queue: string, state: JobState) {
    return (await this.ids(queue, state)).length
  }
  cancel(id: string) {
    const j = this.jobs.get(id)
    if (j === undefined || FINAL_STATES.includes(j.state))
      return Promise.reject(new DmsError('JOB_ENDED', `job ${id} ended`))
    this.cancelled.push(id)
    return Promise.resolve(j)
  }
  /** A job of `queue` moves to `state` (stored, then told). */
  set(id: string, queue: string, state: JobState) {
    const r = jobRecord({ id })
    const j: StoredJob = { state, record: { ...r, spec: { ...r.spec, queue } } }
    this.jobs.set(id, j)
    for (const fn of this.fns) fn(j)
  }
}

describe('orchestrator/queues/queue-book', () => {
  let dir: string
  let db: Db
  let clock: ManualClock
  let jobs: FakeJobs
  let book: QueueBook

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-queues-'))
    db = await openDb(join(dir, 'db'))
    clock = new ManualClock(T0)
    jobs = new FakeJobs()
    book = new QueueBook({ db, clock, log: silentLogger, jobs }, { idleExpirySeconds: 60 })
    await book.start()
  })
  afterEach(async () => {
    book.stop()
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('admits a posted job: its maxRetries is the default of retries; a rerun joins the queue only while active', async () => {
    const q = await book.create({ tag: 'batch', maxRetries: 2 })
    const spec = { ...jobRecord({ id: 'j1' }).spec, queue: q.id }
    book.admitJob(spec, false)
    assert.equal(spec.retries, 2, "the queue's maxRetries")
    const own = { ...spec, retries: 0 }
    book.admitJob(own, true)
    assert.equal(own.retries, 0, 'a job that names its retries keeps them')
    assert.equal(book.rerunInto(q.id), q.id)
    assert.equal(book.rerunInto(undefined), undefined)
    await book.drain(q.id)
    assert.throws(() => book.admitJob({ ...spec }, false), { statusCode: 409 })
    assert.equal(book.rerunInto(q.id), undefined, 'a rerun of an ended queue runs alone')
    assert.throws(() => book.admitJob({ ...spec, queue: 'nope' }, false), { code: 'QUEUE_NOT_FOUND' })
  })

  it('a queue of 100 jobs: counts are right at every change; drain refuses new jobs and ends with the last', async () => {
    const q = await book.create({ tag: 'batch', maxRetries: 2 })
    assert.equal(q.state, 'active')
    assert.equal(book.admit(q.id).maxRetries, 2)
    for (let i = 0; i < 100; i++) {
      jobs.set(`j${i}`, q.id, 'bidding')
      assert.equal(book.get(q.id)?.counts.active, i + 1)
    }
    jobs.set('j0', q.id, 'running') // a live change counts once
    assert.equal(book.get(q.id)?.counts.active, 100)
    const ends: JobState[] = ['completed', 'failed', 'cancelled']
    for (let i = 0; i < 60; i++) jobs.set(`j${i}`, q.id, ends[i % 3])
    assert.deepEqual(book.get(q.id)?.counts, { active: 40, completed: 20, failed: 20, cancelled: 20 })
    jobs.set('j0', q.id, 'completed') // a final state told twice counts once
    assert.equal(book.get(q.id)?.counts.completed, 20)

    const draining = await book.drain(q.id)
    assert.equal(draining.state, 'draining')
    assert.throws(() => book.admit(q.id), { code: 'QUEUE_DRAINING', statusCode: 409 })
    for (let i = 60; i < 99; i++) jobs.set(`j${i}`, q.id, 'completed')
    assert.equal(book.get(q.id)?.state, 'draining', 'one job is still live')
    jobs.set('j99', q.id, 'completed')
    await book.idle()
    const drained = book.get(q.id)!
    assert.equal(drained.state, 'drained')
    assert.deepEqual(drained.counts, { active: 0, completed: 60, failed: 20, cancelled: 20 })
    assert.deepEqual(
      drained.history.map((h) => h.state),
      ['active', 'draining', 'drained'],
    )
    assert.deepEqual((await book.repo.get(q.id))?.state, 'drained', 'stored')
    await assert.rejects(book.drain(q.id), { code: 'QUEUE_ENDED' })
    await assert.rejects(book.cancel(q.id), { code: 'QUEUE_ENDED' })
  })

  it('drain of a queue with no live job ends it at once', async () => {
    const q = await book.create({ tag: 'empty' })
    assert.equal((await book.drain(q.id)).state, 'drained')
  })

  it('cancel cancels every live job, and a job that joins late', async () => {
    const q = await book.create({ tag: 'c' })
    for (let i = 0; i < 5; i++) jobs.set(`j${i}`, q.id, 'running')
    jobs.set('j4', q.id, 'completed')
    const c = await book.cancel(q.id)
    assert.equal(c.state, 'cancelled')
    assert.deepEqual(jobs.cancelled.sort(), ['j0', 'j1', 'j2', 'j3'])
    assert.throws(() => book.admit(q.id), { code: 'QUEUE_ENDED' })
    jobs.set('late', q.id, 'bidding') // admitted just before the cancel, stored just after
    assert.ok(jobs.cancelled.includes('late'))
    for (const id of ['j0', 'j1', 'j2', 'j3', 'late']) jobs.set(id, q.id, 'cancelled')
    assert.deepEqual(book.get(q.id)?.counts, { active: 0, completed: 1, failed: 0, cancelled: 5 })
  })

  it('an idle queue expires on the clock; a live job holds it, its end restarts the wait', async () => {
    const q = await book.create({ tag: 'idle', idleExpirySeconds: 10 })
    clock.advance(9_000)
    jobs.set('a', q.id, 'bidding')
    clock.advance(20_000)
    assert.equal(book.get(q.id)?.state, 'active', 'a live job keeps it')
    jobs.set('a', q.id, 'completed')
    clock.advance(9_999)
    assert.equal(book.get(q.id)?.state, 'active')
    clock.advance(1)
    assert.equal(book.get(q.id)?.state, 'expired')
    assert.throws(() => book.admit(q.id), { code: 'QUEUE_ENDED' })
    const other = await book.create({ tag: 'default' })
    assert.equal(other.idleExpirySeconds, 60, 'the configured default')
  })

  it('a restarted book reads its queues back and recounts them from the jobs', async () => {
    const q = await book.create({ tag: 'r' })
    jobs.set('a', q.id, 'running')
    jobs.set('b', q.id, 'failed')
    await book.drain(q.id)
    book.stop()
    // While it was down, the last job ended (its change was stored, never told to this book).
    jobs.jobs.set('a', { ...jobs.jobs.get('a')!, state: 'completed' })
    book = new QueueBook({ db, clock, log: silentLogger, jobs })
    await book.start()
    await book.idle()
    const back = book.get(q.id)!
    assert.deepEqual(back.counts, { active: 0, completed: 1, failed: 1, cancelled: 0 })
    assert.equal(back.state, 'drained', 'the drain that ended while down is finished')
    assert.throws(() => book.admit('nope'), { code: 'QUEUE_NOT_FOUND', statusCode: 404 })
  })
})
