/**
 * Bid records stored before the workload (version 2) are read at today's version: the
 * allocation's command, env, network and pod members become its workload; records of version 3
 * (before protocol 4) get their request's needs (bid-store.ts, stored-request.ts).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bidRepo, type StoredBid } from '../../../dms/provider/bid-store.js'
import { openDb, Repo, type Db } from '../../../dms/store/db.js'
import { STORES } from '../../../dms/store/tables.js'

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
    assert.equal(one.v, 4)
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

  it("of version 3 are read with the request's needs: one container's, or a pod's members given the pod's total", async () => {
    const raw = new Repo<unknown>(db, STORES.bids.name)
    const v3 = (bidId: string, request: Record<string, unknown>) => ({
      v: 3,
      bidId,
      state: 'reserved',
      at: 1,
      snapshot: {
        value: 'reserved',
        context: {
          history: [],
          request: {
            jobId: bidId,
            maxDurationSeconds: 60,
            maxPrice: 9,
            deadline: 5,
            exclude: ['x'],
            ...request,
          },
        },
      },
    })
    const resources = { cpu: 1, memoryBytes: 64 * MiB, diskBytes: 8 * MiB, gpus: 2 }
    await raw.put('one', v3('one', { resources, image: 'dms-test:1', network: true }))
    const members = [
      { name: 'a', image: 'dms-test:1' },
      { name: 'b', image: 'tool:2', network: true },
    ]
    await raw.put(
      'pod',
      v3('pod', { resources: { ...resources, diskBytes: 0, gpus: 0 }, image: 'dms-test:1', members }),
    )
    const repo = bidRepo(db)
    const one = (await repo.get('one'))!
    assert.equal(one.v, 4)
    assert.deepEqual(one.snapshot.context.request, {
      jobId: 'one',
      maxDurationSeconds: 60,
      maxPrice: 9,
      deadline: 5,
      exclude: ['x'],
      workloadNeeds: {
        members: [
          {
            name: 'main',
            artifact: { kind: 'image', ref: 'dms-test:1' },
            network: 'outbound',
            resources: { cpu: 1, memoryBytes: 64 * MiB, diskBytes: 8 * MiB, gpus: { count: 2 } },
          },
        ],
      },
    })
    const pod = (await repo.values()).find((r) => r.bidId === 'pod')!
    assert.deepEqual(pod.snapshot.context.request.workloadNeeds, {
      members: [
        {
          name: 'a',
          artifact: { kind: 'image', ref: 'dms-test:1' },
          network: 'none',
          resources: { cpu: 1, memoryBytes: 64 * MiB },
        },
        {
          name: 'b',
          artifact: { kind: 'image', ref: 'tool:2' },
          network: 'outbound',
          resources: { cpu: 1, memoryBytes: 64 * MiB },
        },
      ],
    })
    assert.equal('image' in pod.snapshot.context.request, false)
  })
})
