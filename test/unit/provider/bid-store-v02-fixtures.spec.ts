/**
 * The bid records real nodes of main before the workload stored (version 2, test/fixtures/v0.2)
 * read at today's version, each allocation with its workload made of its old fields, and show as
 * bids and allocations (bid-store.ts `upgradeBid`, views.ts). The whole nodes restored on them:
 * test/integration/restore/v0.2-fixtures.spec.ts.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bidRepo, type V2Bid } from '../../../dms/provider/bid-store.js'
import { allocationOf, bidRecordOf } from '../../../dms/provider/views.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { STORES } from '../../../dms/store/tables.js'
import { loadFixture, recordsOf, writeFixture } from '../../helpers/fixtures.js'

describe('provider bid records of main before the workload (fixtures v0.2)', () => {
  let dir: string
  let db: Db
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  for (const node of ['provider-0', 'provider-1'])
    it(`${node}'s read at today's version and show as bids and allocations`, async () => {
      const fixture = await loadFixture('v0.2', node)
      dir = await mkdtemp(join(tmpdir(), 'dms-bid-v02-'))
      await writeFixture(fixture, dir)
      db = await openDb(join(dir, 'db'))
      const stored = recordsOf<V2Bid>(fixture, STORES.bids.name)
      assert.deepEqual([...new Set(stored.map((r) => r.v))], [2])

      const read = await bidRepo(db).values()
      const today = STORES.bids.version
      assert.deepEqual(
        read.map((r) => [r.bidId, r.v, r.state]).sort(),
        stored.map((r) => [r.bidId, today, r.state]).sort(),
      )
      for (const r of read) assert.equal(bidRecordOf(r).bid.bidId, r.bidId)
      const commands = new Map(
        stored.flatMap((r) => r.snapshot.context.allocation ?? []).map((a) => [a.allocationId, a.command]),
      )
      const allocations = read.flatMap((r) => allocationOf(r) ?? [])
      assert.equal(allocations.length, commands.size)
      for (const a of allocations)
        assert.deepEqual(
          a.workload.members.map((m) => [m.artifact, m.command]),
          [[{ kind: 'image', ref: 'dms-test:1' }, commands.get(a.allocationId)]],
        )
    })
})
