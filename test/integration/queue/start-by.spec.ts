/**
 * A job's latest start with real nodes on 127.0.0.1: an approved provider that bids for a start
 * ten minutes from now (a hand-made peer: DMS providers bid only when they have room now) is
 * declined by the requester with the reason and released at once when the job may not wait that
 * long, and ranked, behind a provider that starts now, when the job's `startBy` allows it.
 */
import assert from 'node:assert/strict'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { W } from '../../../dms/protocol/behaviours.js'
import type { BidRequest } from '../../../dms/protocol/messages.js'
import { BID_REQUEST_TOPIC } from '../../../dms/protocol/handles.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import type { TestPeer } from '../../helpers/peers.js'
import { rogueProvider, startRogue } from '../../helpers/rogue.js'

const MiB = 1024 * 1024
const LATER_MS = 600_000

describe("a job's latest start (startBy) against a provider that bids for later", function () {
  this.timeout(90_000)
  let net: TestNetwork
  let later: TestPeer
  const released: string[] = []
  let asked: BidRequest[] = []

  before(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      components: { executor: new CountingExecutor(5) },
      requester: { bidWindowMs: 2000 },
    })
    later = await startRogue(net.requester.addrs())
    await net.contractDb.service.approve(later.system.peerId)
    const approval = await net.contractDb.service.approvalFor(later.system.peerId)
    // Free, but only in ten minutes.
    const { actor, requests } = rogueProvider(later, () => ({
      approval,
      pricePerHour: 0,
      earliestStart: Date.now() + LATER_MS,
    }))
    asked = requests
    actor.on(W.bidRelease, (m) => void released.push((m.payload as { bidId: string }).bidId))
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 2)
  })
  after(async () => {
    await later?.stop()
    await net?.stop()
  })

  const spec = (over: Record<string, unknown> = {}) =>
    parseJobSpec({
      image: TEST_IMAGE,
      command: ['true'],
      resources: { cpu: 0.5, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 1_000_000,
      ...over,
    })

  it('a job that may not wait: the later bid is declined with the reason and released; the job runs now', async () => {
    const posted = await net.requester.orchestrator!.post(spec({ queueTimeout: 0 }))
    const job = await jobReaches(net.requester, posted.record.id)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    assert.equal(job.record.winner?.provider, net.providers[0].peerId)
    assert.deepEqual(
      job.record.bids.map((b) => b.provider),
      [net.providers[0].peerId],
      'the free bid for later was never ranked',
    )
    const declined = job.record.declines.find((d) => d.provider === later.system.peerId)
    assert.match(declined?.reasons[0] ?? '', /^starts at .*, later than now: the job may not wait/)
    // Each bid it made for the job released once (a loaded run may ask twice: a round with no
    // usable bid is published again, and the rogue bids again).
    const bids = asked.filter((r) => r.jobId === posted.record.id).length
    assert.ok(bids >= 1)
    assert.equal(released.length, bids, 'its reservation released at once')
    assert.equal(new Set(released).size, released.length, 'each bid released once')
    assert.equal(net.requester.orchestrator!.bidsIgnored.starts_too_late, 1)
  })

  it('startBy 20m: the later bid is ranked, and loses to the one that starts now despite its price of 0', async () => {
    const quote = await net.requester.orchestrator!.quote(spec({ startBy: '20m' }))
    assert.deepEqual(
      quote.bids.map((b) => b.provider),
      [net.providers[0].peerId, later.system.peerId],
    )
    const [, second] = quote.bids
    assert.equal(second.total, 0)
    assert.match(
      second.why ?? '',
      /finish 1,/,
      'ten minutes later is a whole max duration later: the finish term is 1',
    )
    assert.deepEqual(quote.declines, [])
    const tight = await net.requester.orchestrator!.quote(spec({ startBy: '5m' }))
    assert.deepEqual(
      tight.bids.map((b) => b.provider),
      [net.providers[0].peerId],
    )
    assert.match(tight.declines[0]?.reasons[0] ?? '', /after the job's latest start .* \(startBy\)/)
  })
})
