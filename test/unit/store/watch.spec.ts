/**
 * Counting what a part stores without the part telling: watchRepo sees each write of one
 * repository (puts, deletes, atomic batches), and the provider's allocations-by-state gauge
 * follows it, with no read of the store at a scrape.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Registry } from 'prom-client'
import { ProviderMetrics } from '../../../dms/api/metrics/provider-metrics.js'
import { openDb, Repo, type Db } from '../../../dms/store/db.js'
import { watchRepo } from '../../../dms/store/watch.js'

describe('watchRepo: the writes of one repository, as stored', () => {
  let dir: string
  let db: Db
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-watch-'))
    db = await openDb(join(dir, 'db'))
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('sees puts, deletes and batches of its repository only, until unsubscribed', async () => {
    const mine = new Repo<{ state: string }>(db, 'allocations')
    const other = new Repo<{ state: string }>(db, 'allocations-old')
    const seen: Array<[string, string | undefined]> = []
    const off = watchRepo<{ state: string }>(db, 'allocations', (k, v) => seen.push([k, v?.state]))
    await mine.put('a', { state: 'contracted' })
    await other.put('a', { state: 'other' })
    await db.batch([mine.putOp('b', { state: 'running' }), mine.delOp('a'), other.delOp('a')])
    off()
    await mine.put('c', { state: 'contracted' })
    assert.deepEqual(seen, [
      ['a', 'contracted'],
      ['b', 'running'],
      ['a', undefined],
    ])
  })

  it("a watcher that throws never fails the part's write", async () => {
    const repo = new Repo<{ state: string }>(db, 'allocations')
    watchRepo(db, 'allocations', () => {
      throw new Error('metrics bug')
    })
    await repo.put('a', { state: 'contracted' })
    assert.deepEqual(await repo.get('a'), { state: 'contracted' })
  })

  it('the allocations gauge follows the stored records: scanned once at start, then at each write', async () => {
    const repo = new Repo<{ allocationId: string; state: string }>(db, 'allocations')
    await repo.put('old', { allocationId: 'old', state: 'released' })
    await repo.put('live', { allocationId: 'live', state: 'running' })
    const registry = new Registry()
    const m = new ProviderMetrics(registry, {
      resources: () => {
        const zero = { cpu: 0, memoryBytes: 0, diskBytes: 0, gpus: 0 }
        return { offer: zero, reserved: zero, locked: zero, allocated: zero, free: zero }
      },
      declines: () => ({ busy: 1 }),
      finalStates: ['released'],
    })
    watchRepo<{ state: string }>(db, 'allocations', (id, rec) => m.allocation(id, rec?.state))
    let reads = 0
    await m.scan(async () => {
      reads++
      return (await repo.values()).map((a) => ({ id: a.allocationId, state: a.state }))
    })
    await repo.put('live', { allocationId: 'live', state: 'publishing' })
    await repo.put('new', { allocationId: 'new', state: 'contracted' })
    await repo.put('live', { allocationId: 'live', state: 'released' })
    m.bidRequestIgnored('rate_limited')
    const text = await registry.metrics()
    for (const line of [
      'dms_allocations{state="released"} 2',
      'dms_allocations{state="contracted"} 1',
      'dms_allocations{state="running"} 0',
      'dms_allocations{state="publishing"} 0',
      'dms_provider_declines_total{reason="busy"} 1',
      'dms_provider_bid_requests_ignored_total{reason="rate_limited"} 1',
      'dms_provider_resources{kind="free",resource="cpu"} 0',
    ])
      assert.ok(text.split('\n').includes(line), `${line} not in\n${text}`)
    assert.equal(reads, 1, 'the store is read once, at start')
  })
})
