import assert from 'node:assert/strict'
import { ApiClient } from '../../../dms/api/client.js'
import type { ResourcesView } from '../../../dms/resources/onboarding.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024

describe('provider declines: offboarded, and no Docker engine', function () {
  this.timeout(60_000)
  let net: TestNetwork

  beforeEach(async () => {
    net = await startNetwork([
      { cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 },
      {
        cpu: 1,
        memoryBytes: 512 * MiB,
        perCpuHour: 1000,
        docker: { socketPath: '/nonexistent/docker.sock' },
      },
    ])
  })
  afterEach(async () => net?.stop())

  it('declines with "offboarded" and "engine docker unavailable", and the job fails with both reasons', async () => {
    const [offboarded, noDocker] = net.providers
    const off = await new ApiClient(offboarded.socketPath!).ok<ResourcesView>('DELETE', '/v1/resources/offer')
    assert.equal(off.status, 'offboarded')
    const view = await new ApiClient(noDocker.socketPath!).ok<ResourcesView>('GET', '/v1/resources')
    assert.deepEqual(
      view.machine.engines.map((e) => [e.name, e.available]),
      [['docker', false]],
    )
    assert.match(view.machine.engines[0].why ?? '', /nonexistent/, 'its operator reads why')

    const { id } = await new ApiClient(net.requester.socketPath!).ok<{ id: string }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      command: ['sh', '-c', ':'],
      resources: { cpu: 0.5, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 10_000,
    })
    const job = await jobReaches(net.requester, id, ['failed'])
    assert.equal(job.record.error?.code, 'NO_BIDS')
    const reasons = new Map((job.record.error?.declines ?? []).map((d) => [d.provider, d.reasons]))
    assert.deepEqual(reasons.get(offboarded.peerId), ['offboarded'])
    const engine = reasons.get(noDocker.peerId) ?? []
    assert.equal(engine.length, 1)
    assert.deepEqual(engine, ['engine docker unavailable'], 'the requester reads no local path')
    assert.deepEqual(offboarded.provider!.declines, { offboarded: 1 })
    assert.deepEqual(noDocker.provider!.declines, { 'engine unavailable': 1 })
    // Neither reserved anything for the job.
    assert.deepEqual(offboarded.ledger!.entries(), [])
    assert.deepEqual(noDocker.ledger!.entries(), [])
  })
})

describe('provider accept policy: declines told to the requester', function () {
  this.timeout(60_000)
  let net: TestNetwork

  before(async () => {
    net = await startNetwork([
      {
        cpu: 1,
        memoryBytes: 512 * MiB,
        perCpuHour: 1000,
        policy: { allowRequesters: ['12D3KooWSomeoneElse'] },
      },
      {
        cpu: 1,
        memoryBytes: 512 * MiB,
        perCpuHour: 1000,
        policy: { maxConcurrentJobs: 0, minPrice: 20_000 },
      },
      { cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000, policy: { allowedImages: ['registry.example/*'] } },
    ])
  })
  after(async () => net?.stop())

  it('requester allow list, concurrent jobs, minimum price and image patterns each decline with their reason', async () => {
    const [picky, busy, images] = net.providers
    const { id } = await new ApiClient(net.requester.socketPath!).ok<{ id: string }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      command: ['sh', '-c', ':'],
      resources: { cpu: 0.5, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 10_000,
    })
    const job = await jobReaches(net.requester, id, ['failed'])
    assert.equal(job.record.error?.code, 'NO_BIDS')
    const reasons = new Map((job.record.error?.declines ?? []).map((d) => [d.provider, d.reasons]))
    assert.deepEqual(reasons.get(picky.peerId), ["requester not in this provider's allow list"])
    assert.deepEqual(reasons.get(busy.peerId), [
      "below minimum price: the job's max price 10000 is under 20000",
      'busy: 0 of at most 0 concurrent jobs',
    ])
    assert.deepEqual(reasons.get(images.peerId), [`image ${TEST_IMAGE} is not allowed here`])
    assert.match(job.record.error.message, /allow list/)
    assert.deepEqual(busy.provider!.declines, {
      'below minimum price': 1,
      busy: 1,
    })
  })
})
