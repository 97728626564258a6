/**
 * Records stored by dms between 0.1 and the workload (test/fixtures/v0.2, written by
 * scripts/capture-fixtures.ts from real nodes of main at cea15a6) are loaded by today's code (the
 * suite: test/helpers/restore-suite.ts). That version kept one record per bid (`v: 2`) whose
 * allocation holds the container apart (image and resources in the contract's terms, command, env
 * and network beside them), and contract terms that sign no workload (`workloadHash`). Today's
 * provider reads them at today's version (`STORES.bids.version`), each allocation with its workload made of those fields
 * (dms/provider/bid-store.ts `upgradeBid`); the contract-db settles the contracts as signed.
 */
import assert from 'node:assert/strict'
import type { ContractRecord } from '../../../dms/contract-db/records.js'
import type { StoredBid, V2Bid } from '../../../dms/provider/bid-store.js'
import { Repo } from '../../../dms/store/db.js'
import { STORES } from '../../../dms/store/tables.js'
import { recordsOf, type NodeFixture } from '../../helpers/fixtures.js'
import { TEST_IMAGE } from '../../helpers/network.js'
import { restoreSuite } from '../../helpers/restore-suite.js'

const MiB = 1024 * 1024
const bidsOf = (f: NodeFixture) => recordsOf<V2Bid>(f, STORES.bids.name)

restoreSuite('v0.2', 'dms before the workload', {
  allocations: (f, jobId) =>
    bidsOf(f).flatMap((r) => {
      const a = r.snapshot.context.allocation
      return r.snapshot.context.bid.jobId === jobId && a !== undefined
        ? [{ allocationId: a.allocationId, state: r.state }]
        : []
    }),
  bidCount: (f) => bidsOf(f).length,

  fixtureHolds(fx, manifest) {
    const bids = [...bidsOf(fx['provider-0']), ...bidsOf(fx['provider-1'])]
    assert.deepEqual([...new Set(bids.map((r) => r.v))], [2])
    const allocations = bids.flatMap((r) => r.snapshot.context.allocation ?? [])
    assert.ok(allocations.length >= 2)
    for (const a of allocations) {
      assert.ok(Array.isArray(a.command), 'a version 2 allocation keeps its command apart')
      assert.equal((a as { workload?: unknown }).workload, undefined)
    }
    const contracts = recordsOf<ContractRecord>(fx['contract-db'], STORES.cdbContracts.name)
    for (const c of contracts) assert.equal(c.contract.terms.workloadHash, undefined)
    // Between its bids and its contract: the provider holds reservations for it, no allocation.
    assert.equal(manifest.states[manifest.jobs.pastBids], 'contracting')
    assert.ok(
      bids.some((r) => r.snapshot.context.bid.jobId === manifest.jobs.pastBids && r.state === 'reserved'),
    )
  },

  async providerRestored(p, f) {
    // Every version 2 allocation reads with the workload its old fields say: one member, the
    // contract's image and resources, the invoked command and env, no network.
    const restored = new Map((await p.provider!.allocations.repo.values()).map((a) => [a.allocationId, a]))
    const old = bidsOf(f).flatMap((r) => r.snapshot.context.allocation ?? [])
    assert.equal(restored.size, old.length)
    for (const a of old) {
      assert.deepEqual(restored.get(a.allocationId)?.workload, {
        members: [
          {
            name: 'main',
            artifact: { kind: 'image', ref: TEST_IMAGE },
            command: a.command,
            env: a.env,
            network: 'none',
            resources: { cpu: 0.5, memoryBytes: 64 * MiB },
          },
        ],
      })
    }
  },

  async networkRestored({ requester, providers, cdb, fx }, manifest) {
    // The job caught between its bids and its contract goes to the end with today's code: its
    // reservation (30 s from the capture, on the nodes' clock) is contracted, and what runs is the
    // workload its stored spec says.
    const pastBids = (await requester.orchestrator!.get(manifest.jobs.pastBids))!
    assert.equal(pastBids.state, 'completed')
    const winner = providers.find((p) => p.peerId === pastBids.record.winner?.provider)!
    const ran = (await winner.provider!.allocations.repo.values()).find(
      (a) => a.jobId === manifest.jobs.pastBids,
    )
    assert.deepEqual(
      ran?.workload.members.map((m) => [m.artifact, m.command, m.resources]),
      [[{ kind: 'image', ref: TEST_IMAGE }, ['sh', '-c', 'echo c'], { cpu: 0.5, memoryBytes: 64 * MiB }]],
    )
    // A bid that went on after the restart is stored back at today's version.
    const today = STORES.bids.version
    for (const [i, p] of providers.entries()) {
      const live = bidsOf(fx[`provider-${i}`]).filter((r) => r.state !== 'released')
      const onDisk = new Map(
        (await new Repo<StoredBid>(p.db, STORES.bids.name).values()).map((r) => [r.bidId, r]),
      )
      for (const r of live)
        assert.equal(onDisk.get(r.bidId)?.v, today, `bid ${r.bidId} stored at version ${today}`)
    }
    // The contracts signed without a workload end settled, their terms as they were signed.
    for (const c of recordsOf<ContractRecord>(fx['contract-db'], STORES.cdbContracts.name)) {
      const now = await cdb.service.contract(c.contract.terms.contractId)
      assert.equal(now?.state, 'settled')
      assert.deepEqual(now?.contract, c.contract)
    }
    // No resources stay held for the restored jobs once they have ended.
    const restored = new Set(Object.values(manifest.jobs))
    for (const p of providers) {
      await p.provider!.allocations.idle()
      assert.deepEqual(
        p.ledger!.entries().filter((e) => restored.has(e.jobId)),
        [],
      )
    }
  },
})
