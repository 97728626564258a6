import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { ApiClient } from '../../dms/api/client.js'
import type { ResourcesView } from '../../dms/resources/onboarding.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'

const MiB = 1024 * 1024

describe('offboarding while a job runs', function () {
  this.timeout(90_000)
  let net: TestNetwork

  before(() => execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' }))
  beforeEach(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }])
  })
  afterEach(async () => net?.stop())

  it('lets the running allocation finish, declines new work, and bids again once onboarded', async () => {
    const requester = new ApiClient(net.requester.socketPath!)
    const provider = net.providers[0]
    const providerApi = new ApiClient(provider.socketPath!)
    const post = (command: string) =>
      requester.ok<{ id: string }>('POST', '/v1/jobs', {
        image: TEST_IMAGE,
        command: ['sh', '-c', command],
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 10_000,
      })

    const running = await post('sleep 2; echo finished')
    await jobReaches(net.requester, running.id, ['running'])
    const off = await providerApi.ok<ResourcesView>('DELETE', '/v1/resources/offer')
    assert.equal(off.status, 'offboarded')
    assert.equal(off.allocated.cpu, 0.5, 'the running job keeps its resources')

    const refused = await post(':')
    const declined = await jobReaches(net.requester, refused.id, ['failed', 'completed'])
    assert.equal(declined.record.error?.code, 'NO_BIDS')
    assert.deepEqual(
      declined.record.error?.declines?.map((d) => d.reasons),
      [['offboarded']],
    )

    const done = await jobReaches(net.requester, running.id, ['completed', 'failed'])
    assert.equal(done.state, 'completed', JSON.stringify(done.record.error))
    await provider.provider!.allocations.idle()
    assert.deepEqual(provider.ledger!.entries(), [], 'the allocation released its resources')

    const back = await providerApi.ok<ResourcesView>('PUT', '/v1/resources/offer', {})
    assert.equal(back.status, 'onboarded')
    assert.deepEqual(back.free, back.onboarded)
    const after = await post('echo again')
    const third = await jobReaches(net.requester, after.id, ['completed', 'failed'])
    assert.equal(third.state, 'completed', JSON.stringify(third.record.error))
  })
})
