/**
 * What a provider does with bid requests before any reservation: nothing for a requester the
 * contract-db has not approved, at most the per-requester cap for an approved one, and no answer
 * past a peer's rate. Legitimate jobs still get bids. Real nodes on 127.0.0.1, a real
 * contract-db, real Docker for the legitimate runs.
 */
import assert from 'node:assert/strict'
import { BID_REQUEST_TOPIC } from '../../../dms/protocol/handles.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import {
  jobReaches,
  startNetwork,
  TEST_IMAGE,
  type ProviderSpec,
  type TestNetwork,
} from '../../helpers/network.js'
import type { TestPeer } from '../../helpers/peers.js'
import { bidRequest, ignoredRequests, ROGUE_FUNDS, rogueRequester, startRogue } from '../../helpers/rogue.js'

const MiB = 1024 * 1024

describe('provider: admission of bid requests', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let rogue: TestPeer

  async function setUp(policy: ProviderSpec['policy'] = {}): Promise<void> {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000, policy }])
    rogue = await startRogue(net.providers[0].addrs())
    await rogue.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)
  }
  afterEach(async () => {
    await rogue?.stop()
    await net?.stop()
  })

  /** A job from the approved requester, run to its end. */
  const legitimateJob = async (cpu: number) => {
    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['sh', '-c', 'echo served'],
        resources: { cpu, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1_000_000,
      }),
    )
    return jobReaches(net.requester, posted.record.id)
  }

  /** An approved requester peer, funded: its credential and funds proof. */
  const approvedRogue = async () => {
    await net.contractDb.service.approve(rogue.system.peerId)
    await net.contractDb.service.credit(rogue.system.peerId, ROGUE_FUNDS)
    return {
      approval: await net.contractDb.service.approvalFor(rogue.system.peerId),
      funds: await net.contractDb.service.fundsFor(rogue.system.peerId),
    }
  }

  it("an unapproved requester's bid requests for the whole offer reserve nothing; legitimate jobs still get bids", async () => {
    await setUp()
    const provider = net.providers[0]
    const r = rogueRequester(rogue)
    const ignored = ignoredRequests(provider.provider!, 3)
    // The whole offer, asked three times (as if re-published every 10 s).
    for (const id of ['a', 'b', 'c']) await r.publish(bidRequest(`hold-all-${id}`, 1))
    await Promise.race([ignored, r.answered(1)])
    assert.deepEqual(r.answers, [], 'an unapproved requester gets no answer at all')
    assert.deepEqual(provider.ledger!.entries(), [])
    assert.equal(provider.provider!.bidRequestsIgnored.no_approval, 3)

    const job = await legitimateJob(1)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    assert.equal(job.record.winner?.provider, provider.peerId)
  })

  it('one approved requester cannot hold more than its cap of the offer, or more open bids than allowed', async () => {
    await setUp({ requesterCap: { maxReservedShare: 0.5, maxOpenBids: 2 } })
    const provider = net.providers[0]
    const { approval, funds } = await approvedRogue()
    const r = rogueRequester(rogue)
    // One at a time, each answered before the next.
    const asks: Array<[string, number]> = [
      ['first', 0.4], // holds nothing yet: reserved
      ['share', 0.4], // 0.8 of the 1 cpu offered > 50 %: declined
      ['fits', 0.1], // 0.5: reserved (2 open bids)
      ['count', 0.05], // a third open bid: declined
    ]
    for (const [i, [id, cpu]] of asks.entries()) {
      await r.publish(bidRequest(id, cpu, approval, funds))
      await r.answered(i + 1)
    }
    assert.deepEqual(
      r.answers.map((a) => [a.jobId, a.kind]),
      [
        ['first', 'bid'],
        ['share', 'decline'],
        ['fits', 'bid'],
        ['count', 'decline'],
      ],
    )
    assert.match(
      r.answers[1].reasons!.join(),
      /^requester cap: cpu reserved for this requester would be 0\.8 of 1 offered, at most 50% per requester$/,
    )
    assert.match(
      r.answers[3].reasons!.join(),
      /^requester cap: 2 open bids held here, at most 2 per requester$/,
    )
    assert.equal(provider.provider!.declines['requester cap'], 2)
    assert.equal(provider.ledger!.summary().reserved.cpu, 0.5)

    // Another requester is served from the rest.
    const job = await legitimateJob(0.5)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    assert.equal(job.record.winner?.provider, provider.peerId)
  })

  it('a flood of bid requests from one peer is answered up to its rate, the rest dropped and counted', async () => {
    // A burst of 3 and (for the length of this test) no refill; no cap on what it may hold.
    await setUp({ bidRequestRate: { perSecond: 0.0001, burst: 3 }, requesterCap: { maxReservedShare: 1 } })
    const provider = net.providers[0]
    const { approval, funds } = await approvedRogue()
    const r = rogueRequester(rogue)
    const ignored = ignoredRequests(provider.provider!, 17)
    for (let i = 0; i < 20; i++) await r.publish(bidRequest(`flood-${i}`, 0.01, approval, funds))
    await Promise.all([ignored, r.answered(3)])
    assert.equal(provider.provider!.bidRequestsIgnored.rate_limited, 17)
    const metrics = await provider.metrics.render()
    assert.match(metrics, /^dms_provider_bid_requests_ignored_total\{reason="rate_limited"\} 17$/m)
    assert.equal(r.answers.length, 3)
    assert.equal(provider.ledger!.entries().length, 3)

    // The approved requester next door is not held up by it.
    const job = await legitimateJob(0.5)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
  })
})
