/**
 * Push orchestration with real nodes on 127.0.0.1: a job with `providers.direct` sends its bid
 * request to that provider over the direct stream, never on gossip (a peer listening on the bid
 * request topic sees a gossip job's request, and never the direct job's), and completes there.
 * A test executor stands in for Docker.
 */
import assert from 'node:assert/strict'
import type { Message } from '../../../actors/system.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { BID_REQUEST_TOPIC } from '../../../dms/protocol/handles.js'
import type { BidRequest } from '../../../dms/protocol/messages.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'

const MiB = 1024 * 1024

describe('push orchestration: providers.direct', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let listener: TestPeer
  const heard: string[] = []

  before(async () => {
    net = await startNetwork(
      [
        { cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 5000 },
        { cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 100 },
      ],
      { components: { executor: new CountingExecutor() }, requester: { bidWindowMs: 1000 } },
    )
    listener = await startPeer(net.requester.addrs())
    listener.system
      .spawn('listener', listener.key)
      .subscribe(BID_REQUEST_TOPIC)
      .on(W.bidRequest, (m: Message<BidRequest>) => {
        heard.push(m.payload.jobId)
      })
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 3)
  })
  after(async () => {
    await listener?.stop()
    await net?.stop()
  })

  const spec = (direct?: string[]) =>
    parseJobSpec({
      image: TEST_IMAGE,
      command: ['true'],
      resources: { cpu: 1, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 1_000_000,
      ...(direct !== undefined ? { providers: { direct } } : {}),
    })

  it('a gossip job is heard by the listener; a direct job is not, and runs on its provider', async () => {
    const orch = net.requester.orchestrator!
    const gossip = await orch.post(spec())
    const viaGossip = await jobReaches(net.requester, gossip.record.id)
    assert.equal(viaGossip.state, 'completed')
    assert.ok(heard.includes(gossip.record.id), 'the listener hears gossip bid requests')
    assert.equal(viaGossip.record.winner?.provider, net.providers[1].peerId, 'the cheaper one on gossip')

    // The dearer provider, chosen directly: only it is asked.
    const pushed = await orch.post(spec([net.providers[0].peerId]))
    const viaDirect = await jobReaches(net.requester, pushed.record.id)
    assert.equal(viaDirect.state, 'completed', JSON.stringify(viaDirect.record.error))
    assert.equal(viaDirect.record.winner?.provider, net.providers[0].peerId)
    assert.deepEqual(
      viaDirect.record.bids.map((b) => b.provider),
      [net.providers[0].peerId],
      'no other provider was asked',
    )
    assert.ok(!heard.includes(pushed.record.id), 'never on gossip')
  })
})
