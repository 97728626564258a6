/**
 * The requester ranks only bids it can contract: a provider the contract-db never approved (no
 * credential, or a forged, expired, borrowed or foreign one) cannot win with a price of 0 and a
 * made-up start, and a bid with an oversized field is refused at decode and never stored.
 * Real nodes on 127.0.0.1, a real contract-db, real Docker for the honest provider's run.
 */
import assert from 'node:assert/strict'
import { KeyPair } from '../../../actors/identity.js'
import { issueApproval } from '../../../dms/contracts/approval.js'
import { BID_REQUEST_TOPIC } from '../../../dms/protocol/handles.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { peerOf } from '../../helpers/contracts.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import type { TestPeer } from '../../helpers/peers.js'
import { rogueProvider, startRogue, type RogueBidOptions } from '../../helpers/rogue.js'

const MiB = 1024 * 1024

describe('requester: only approved providers bids are ranked', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let rogues: TestPeer[] = []

  beforeEach(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      requester: { bidWindowMs: 2000 },
    })
  })
  afterEach(async () => {
    for (const r of rogues) await r.stop()
    rogues = []
    await net?.stop()
  })

  /** Rogue providers bidding as told, each seen by the requester on the bid topic. */
  async function addRogues(
    ...opts: Array<(peer: TestPeer) => RogueBidOptions | Promise<RogueBidOptions>>
  ): Promise<TestPeer[]> {
    const peers = await Promise.all(opts.map(() => startRogue(net.requester.addrs())))
    for (const [i, p] of peers.entries()) rogueProvider(p, await opts[i](p))
    rogues.push(...peers)
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1 + peers.length)
    return peers
  }

  const post = () =>
    net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['sh', '-c', 'echo done'],
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1_000_000,
      }),
    )

  it('an unapproved provider bidding 0 with a start an hour ago never wins; the approved one runs the job', async () => {
    const [rogue] = await addRogues(() => ({ pricePerHour: 0 }))
    const job = await jobReaches(net.requester, (await post()).record.id)
    const honest = net.providers[0].peerId
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    assert.equal(job.record.winner?.provider, honest)
    assert.deepEqual(
      job.record.bids.map((b) => b.provider),
      [honest],
    )
    assert.ok(!job.record.bids.some((b) => b.provider === rogue.system.peerId))
    assert.equal(net.requester.orchestrator!.bidsIgnored.no_approval, 1)
    const metrics = await net.requester.metrics.render()
    assert.match(metrics, /^dms_requester_bids_ignored_total\{reason="no_approval"\} 1$/m)
  })

  it('a forged, an expired, a borrowed and a foreign credential are each ignored and counted', async () => {
    const cdb = net.contractDb
    const otherCdb = KeyPair.generate()
    const honestCredential = net.providers[0].approvals.get(cdb.peerId)!.current()!
    await addRogues(
      // Signed by the rogue itself, naming the real contract-db.
      (p) => ({
        approval: issueApproval(p.key, { peer: p.system.peerId, contractDb: cdb.peerId, now: Date.now() }),
      }),
      // Really issued by the contract-db, but twenty minutes ago for ten.
      (p) => ({
        approval: issueApproval(cdb.key, {
          peer: p.system.peerId,
          contractDb: cdb.peerId,
          now: Date.now() - 20 * 60_000,
          ttlMs: 10 * 60_000,
        }),
      }),
      // The approved provider's own credential, replayed by another peer.
      () => ({ approval: honestCredential }),
      // Issued by a contract-db this requester does not trust.
      (p) => ({
        approval: issueApproval(otherCdb, {
          peer: p.system.peerId,
          contractDb: peerOf(otherCdb),
          now: Date.now(),
        }),
      }),
    )
    const job = await jobReaches(net.requester, (await post()).record.id)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    assert.equal(job.record.winner?.provider, net.providers[0].peerId)
    assert.equal(job.record.bids.length, 1)
    assert.deepEqual(net.requester.orchestrator!.bidsIgnored, {
      approval_forged: 1,
      approval_expired: 1,
      approval_other_peer: 1,
      approval_other_contract_db: 1,
    })
  })

  it('a bid with a 3.5 MB bid id is refused at decode, counted, and never stored', async () => {
    await addRogues(async (p) => {
      // Approved, with a valid credential: only the bound stops this bid.
      await net.contractDb.service.approve(p.system.peerId)
      return {
        approval: await net.contractDb.service.approvalFor(p.system.peerId),
        bidId: 'x'.repeat(3_500_000),
        pricePerHour: 1_000_000, // dearer than the honest provider, and starting later: it would lose
        earliestStart: Date.now() + 10_000,
      }
    })
    const job = await jobReaches(net.requester, (await post()).record.id)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    assert.deepEqual(
      job.record.bids.map((b) => b.provider),
      [net.providers[0].peerId],
    )
    assert.ok(job.record.bids.every((b) => b.bidId.length <= 128))
    assert.deepEqual(net.requester.payloadRefusals['/dms/job/bid'], { too_long: 1 })
    assert.equal(net.requester.system.rejections.bad_payload, 1)
    const metrics = await net.requester.metrics.render()
    assert.match(metrics, /^dms_payloads_refused_total\{behaviour="\/dms\/job\/bid",reason="too_long"\} 1$/m)
    // Nothing of it in the stored record either.
    const stored = JSON.stringify(await net.requester.orchestrator!.jobs.get(job.record.id))
    assert.ok(stored.length < 100_000, `stored job is ${stored.length} characters`)
  })
})
