/**
 * An approved requester that locks bid after bid (no contract needed to lock) holds no more than
 * its cap of the offer: locks and contracts waiting for their invocation count in the cap, not
 * only reservations, and the requester next door is still served. Real nodes on 127.0.0.1, a real
 * contract-db, real Docker for the legitimate job.
 */
import assert from 'node:assert/strict'
import { W } from '../../../dms/protocol/behaviours.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import type { TestPeer } from '../../helpers/peers.js'
import { approvedRogueRequester, bidRequest } from '../../helpers/rogue.js'

const MiB = 1024 * 1024

describe('provider: locks count in the per-requester cap', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let rogue: TestPeer
  afterEach(async () => {
    await rogue?.stop()
    await net?.stop()
  })

  it('a requester locking bid after bid holds at most its share; another requester is served', async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }])
    const a = await approvedRogueRequester(net)
    rogue = a.rogue
    const { provider, approval, funds, r, to } = a
    // Each bid locked as soon as it comes, before asking for the next: a quarter of the cpu each.
    for (let i = 0; i < 4; i++) {
      await r.publish(bidRequest(`grab-${i}`, 0.25, approval, funds))
      await r.answered(i + 1)
      const bid = r.answers[i].bid
      if (bid === undefined) continue
      await r.actor.request(to, W.jobRequest, { jobId: bid.jobId, bidId: bid.bidId }, { timeoutMs: 5000 })
    }
    assert.deepEqual(
      r.answers.map((a) => a.kind),
      ['bid', 'bid', 'decline', 'decline'],
    )
    assert.match(
      r.answers[2].reasons!.join(),
      /^requester cap: cpu reserved for this requester would be 0\.75 of 1/,
    )
    const held = provider.ledger!.summary()
    assert.equal(held.locked.cpu, 0.5, 'half the offer, locked')
    assert.equal(held.reserved.cpu, 0)

    const job = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['sh', '-c', 'echo served'],
        resources: { cpu: 0.25, memory: '16MiB' },
        maxDuration: 60,
        maxPrice: 1_000_000,
      }),
    )
    const done = await jobReaches(net.requester, job.record.id)
    assert.equal(done.state, 'completed', JSON.stringify(done.record.error))
    assert.equal(done.record.winner?.provider, provider.peerId)
  })
})
