/**
 * The requester's record of its providers on a real level database: a finished job counts a fault
 * for each provider dropped in it and a completion for the winner of a completed job; the
 * reliability read through the cache follows the writes.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ProviderRecords } from '../../../dms/orchestrator/provider-records.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { jobRecord, T0 } from '../../helpers/steps.js'

describe('orchestrator/provider-records', () => {
  let dir: string
  let db: Db

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-provider-records-'))
    db = await openDb(join(dir, 'db'))
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  const fault = (provider: string) => ({
    provider,
    error: { code: 'PROVIDER_SILENT', message: 'silent' },
    at: T0,
  })

  it('counts faults of dropped providers and the completion of the winner, stored', async () => {
    const records = new ProviderRecords(db)
    assert.equal(await records.reliability('a'), 0.5, 'never used: 0.5')
    const job = jobRecord({
      attempts: [fault('a'), fault('b')],
      winner: { bidId: 'x', provider: 'c', why: '' },
    })
    await records.recordOutcome('completed', job)
    await records.recordOutcome('completed', { ...job, attempts: [fault('a')] })
    assert.deepEqual(await records.repo.get('a'), { completed: 0, faults: 2 })
    assert.deepEqual(await records.repo.get('b'), { completed: 0, faults: 1 })
    assert.deepEqual(await records.repo.get('c'), { completed: 2, faults: 0 })
    assert.equal(await records.reliability('a'), 1 / 4)
    assert.equal(await records.reliability('c'), 3 / 4)
    // A fresh reader (a restarted requester) reads the same from the database.
    assert.equal(await new ProviderRecords(db).reliability('c'), 3 / 4)
  })

  it('a failed or cancelled job credits no completion to its winner', async () => {
    const records = new ProviderRecords(db)
    for (const state of ['failed', 'cancelled'] as const)
      await records.recordOutcome(state, jobRecord({ winner: { bidId: 'x', provider: 'c', why: '' } }))
    assert.equal(await records.repo.get('c'), undefined)
  })

  it('concurrent outcomes for one provider are all counted', async () => {
    const records = new ProviderRecords(db)
    const job = jobRecord({ winner: { bidId: 'x', provider: 'c', why: '' } })
    await Promise.all([1, 2, 3, 4].map(() => records.recordOutcome('completed', job)))
    assert.deepEqual(await records.get('c'), { completed: 4, faults: 0 })
  })

  it('the cache is bounded: emptied when full, and reads go back to the database', async () => {
    const records = new ProviderRecords(db, { maxCached: 2 })
    await records.recordOutcome('completed', jobRecord({ winner: { bidId: 'x', provider: 'c', why: '' } }))
    await records.get('d')
    await records.get('e') // the cache was full: emptied, then holds e
    assert.deepEqual(await records.get('c'), { completed: 1, faults: 0 })
  })
})
