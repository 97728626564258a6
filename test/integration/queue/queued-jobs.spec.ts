/**
 * Queued jobs with real nodes on 127.0.0.1 (a test executor instead of Docker: these tests count
 * runs): 10 jobs posted to one provider with room for one all complete, one at a time, none lost;
 * a job whose queueTimeout is too short fails QUEUE_TIMEOUT with the provider's reason.
 */
import assert from 'node:assert/strict'
import { ApiClient } from '../../../dms/api/client.js'
import { BID_REQUEST_TOPIC, CAPACITY_TOPIC } from '../../../dms/protocol/handles.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024
const spec = (queueTimeout: number) =>
  parseJobSpec({
    image: TEST_IMAGE,
    command: ['true'],
    resources: { cpu: 1, memory: '64MiB' },
    maxDuration: 60,
    maxPrice: 100_000,
    queueTimeout,
  })

describe('queued jobs: one provider with room for one job', function () {
  this.timeout(120_000)
  let net: TestNetwork
  const executor = new CountingExecutor(20)

  before(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      components: { executor },
      requester: { bidWindowMs: 1000 },
    })
  })
  after(() => net?.stop())

  it('10 jobs posted at once all complete, never more than one running, none lost', async () => {
    const orch = net.requester.orchestrator!
    const posted = await Promise.all(Array.from({ length: 10 }, () => orch.post(spec(120))))
    const ended = await Promise.all(posted.map((p) => jobReaches(net.requester, p.record.id)))
    assert.deepEqual(
      ended.map((j) => j.state),
      Array(10).fill('completed'),
      ended.map((j) => j.record.error?.message ?? '').join('\n'),
    )
    assert.equal(executor.runs, 10)
    assert.equal(executor.maxRunning, 1, 'the offer has room for one job at a time')
    const queued = ended.filter((j) => j.record.history.some((h) => h.state === 'queued'))
    assert.ok(queued.length >= 8, `the jobs that found the provider busy waited in queued (${queued.length})`)
    assert.ok(
      queued.some((j) => j.record.queue?.wokenBy?.startsWith('capacity ')),
      'capacity news woke queued jobs',
    )
    assert.ok(net.providers[0].provider!.capacityNews.sent > 0)

    // GET /v1/info shows the topics (subscribed and known) and the capacity news.
    type Info = {
      topics: { subscribed: string[]; known: Array<{ topic: string; peers: number }> }
      capacity: { queued?: number; woken?: number; news?: Record<string, number>; announced?: number }
    }
    const info = await new ApiClient(net.requester.socketPath!).ok<Info>('GET', '/v1/info')
    assert.ok(info.topics.subscribed.includes(CAPACITY_TOPIC), 'the requester listens to capacity news')
    assert.ok(info.capacity.woken! > 0 && info.capacity.news!.kept > 0)
    assert.equal(info.capacity.queued, 0)
    const provider = await new ApiClient(net.providers[0].socketPath!).ok<Info>('GET', '/v1/info')
    assert.deepEqual(provider.topics.subscribed, [BID_REQUEST_TOPIC], 'a provider only publishes news')
    assert.ok(provider.topics.known.some((t) => t.topic === CAPACITY_TOPIC && t.peers >= 1))
    assert.equal(provider.capacity.announced, net.providers[0].provider!.capacityNews.sent)
  })

  it("a queueTimeout too short: the job fails QUEUE_TIMEOUT with the provider's reason", async () => {
    const orch = net.requester.orchestrator!
    let open!: () => void
    executor.gate = new Promise<void>((r) => (open = r))
    const first = await orch.post(spec(120))
    await jobReaches(net.requester, first.record.id, ['running'])
    const late = await orch.post(spec(2))
    const failed = await jobReaches(net.requester, late.record.id)
    open()
    executor.gate = undefined
    assert.equal(failed.state, 'failed')
    assert.equal(failed.record.error?.code, 'QUEUE_TIMEOUT')
    assert.match(failed.record.error.message, /not enough cpu/)
    assert.equal(failed.record.error.declines?.[0]?.provider, net.providers[0].peerId)
    assert.equal((await jobReaches(net.requester, first.record.id)).state, 'completed')
  })
  it('a startAt job waits in scheduled and does not bid before its time', async () => {
    const orch = net.requester.orchestrator!
    const startAt = Date.now() + 1500
    const posted = await orch.post({ ...spec(0), startAt })
    assert.equal(posted.state, 'scheduled')
    const job = await jobReaches(net.requester, posted.record.id)
    assert.equal(job.state, 'completed')
    const [first, second] = job.record.history
    assert.equal(first.state, 'scheduled')
    assert.equal(second.state, 'bidding')
    assert.ok(second.at >= startAt, `bid at ${second.at}, not before ${startAt}`)
    assert.ok(
      job.record.bids.every((b) => b.earliestStart >= startAt),
      'the provider was asked after startAt',
    )
  })
})
