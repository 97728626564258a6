/**
 * Bid records stored before the workload (version 2) are read at today's version: the
 * allocation's command, env, network and pod members become its workload (bid-store.ts). Both a
 * literal record and the records real nodes of that version stored (test/fixtures/v0.2).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bidRepo, type StoredBid, type V2Bid } from '../../../dms/provider/bid-store.js'
import { allocationOf, bidRecordOf } from '../../../dms/provider/views.js'
import { openDb, Repo, type Db } from '../../../dms/store/db.js'
import { STORES } from '../../../dms/store/tables.js'
import { loadFixture, recordsOf, writeFixture } from '../../helpers/fixtures.js'

const MiB = 1024 * 1024
const terms = {
  image: 'dms-test:1',
  resources: { cpu: 1, memoryBytes: 64 * MiB, diskBytes: 8 * MiB, gpus: 0 },
}

/** A record as dms before the workload stored it: an allocation with its container's fields apart. */
function v2(bidId: string, allocation: Record<string, unknown>): unknown {
  return {
    v: 2,
    bidId,
    state: 'running',
    at: 1,
    snapshot: {
      value: { active: 'running' },
      context: {
        bidId,
        history: [],
        allocation: {
          allocationId: `alloc-${bidId}`,
          contract: { terms, requesterSignature: 's' },
          inputs: [],
          diskBytes: 8 * MiB,
          invokedAt: 1,
          provisionBy: 2,
          ...allocation,
        },
      },
    },
  }
}

describe('provider bid records of version 2', () => {
  let dir: string
  let db: Db
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-bid-upgrade-'))
    db = await openDb(join(dir, 'db'))
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it("are read with the allocation's workload: one container from the terms, or the pod's members", async () => {
    const raw = new Repo<unknown>(db, STORES.bids.name)
    await raw.put('one', v2('one', { command: ['sh', '-c', 'hi'], env: { A: '1' }, network: true }))
    const member = { image: 'tool:2', command: ['b'], env: {}, cpu: 0.5, memoryBytes: 32 * MiB }
    const members = [
      { name: 'a', ...member },
      { name: 'b', ...member, network: true },
    ]
    await raw.put('pod', v2('pod', { command: [], env: {}, members }))
    const repo = bidRepo(db)
    const one = (await repo.get('one')) as StoredBid
    assert.equal(one.v, 3)
    const a = one.snapshot.context.allocation!
    assert.deepEqual(a.workload, {
      members: [
        {
          name: 'main',
          artifact: { kind: 'image', ref: 'dms-test:1' },
          command: ['sh', '-c', 'hi'],
          env: { A: '1' },
          network: 'outbound',
          resources: { cpu: 1, memoryBytes: 64 * MiB, diskBytes: 8 * MiB },
        },
      ],
    })
    assert.equal('command' in a, false)
    assert.equal(a.allocationId, 'alloc-one')
    const pod = (await repo.values()).find((r) => r.bidId === 'pod')!
    assert.deepEqual(
      pod.snapshot.context.allocation!.workload.members.map((m) => [
        m.name,
        m.artifact,
        m.network,
        m.resources,
      ]),
      [
        ['a', { kind: 'image', ref: 'tool:2' }, 'none', { cpu: 0.5, memoryBytes: 32 * MiB }],
        ['b', { kind: 'image', ref: 'tool:2' }, 'outbound', { cpu: 0.5, memoryBytes: 32 * MiB }],
      ],
    )
  })

  it('the records of main before the workload (fixtures v0.2) all read at version 3 and show as bids', async () => {
    await db.close()
    const fixture = await loadFixture('v0.2', 'provider-0')
    await writeFixture(fixture, dir)
    db = await openDb(join(dir, 'db'))
    const stored = recordsOf<V2Bid>(fixture, STORES.bids.name)
    assert.deepEqual([...new Set(stored.map((r) => r.v))], [2])
    const read = await bidRepo(db).values()
    assert.deepEqual(
      read.map((r) => [r.bidId, r.v, r.state]).sort(),
      stored.map((r) => [r.bidId, 3, r.state]).sort(),
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
