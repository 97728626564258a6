/**
 * Issue 13: bid requests a requester's API would refuse, sent anyway (an older or hostile
 * requester: here the real requester node with its spec check skipped), reach a real provider
 * whose engine is a recording stand-in. An image that is not a reference, or names a registry the
 * provider does not use, is declined before the engine hears of it; a CPU share below the
 * executor's floor is ignored and nothing is reserved for it.
 */
import assert from 'node:assert/strict'
import type { JobSpec } from '../../../dms/orchestrator/job-spec.js'
import { startFakeEngine, type FakeEngine } from '../../helpers/fake-engine.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024

/** A spec as parseJobSpec would return it, but unchecked. */
const unchecked = (image: string, cpu = 0.5): JobSpec => ({
  image,
  command: ['sh', '-c', ':'],
  env: {},
  resources: { cpu, memoryBytes: 64 * MiB, diskBytes: 0, gpus: 0 },
  maxDurationSeconds: 60,
  maxPrice: 10_000,
  retries: 0,
  providers: { allow: [], deny: [] },
})

describe('provider: hostile images and CPU shares never reach the engine', function () {
  this.timeout(60_000)
  let engine: FakeEngine
  let net: TestNetwork

  before(async () => {
    engine = await startFakeEngine((method, path) => {
      if (method === 'GET' && path.startsWith('/containers/json')) return { status: 200, json: [] }
      if (method === 'GET' && path === `/images/${TEST_IMAGE}/json`)
        return { status: 200, json: { Id: 'sha256:1' } }
      return { status: 404, json: { message: 'no such image' } }
    })
    net = await startNetwork(
      [{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000, docker: { socketPath: engine.socketPath } }],
      { requester: { bidWindowMs: 1000, publishAttempts: 1 } },
    )
  })
  after(async () => {
    await net?.stop()
    await engine?.stop()
  })

  it('declines ../../containers/json, a//b and 127.0.0.1:1/x with the reason, making no engine call', async () => {
    const provider = net.providers[0]
    const before = engine.requests.length
    const images = ['../../containers/json', 'a//b', '127.0.0.1:1/x']
    const jobs = await Promise.all(images.map((image) => net.requester.orchestrator!.post(unchecked(image))))
    const ended = await Promise.all(jobs.map((j) => jobReaches(net.requester, j.record.id, ['failed'])))
    const reasons = ended.map((j) => {
      assert.equal(j.record.error?.code, 'NO_BIDS')
      return (j.record.error?.declines ?? []).find((d) => d.provider === provider.peerId)?.reasons
    })
    assert.equal(reasons[0]?.length, 1)
    assert.match(reasons[0]?.[0] ?? '', /^invalid image: registry "\.\." is not a host name/)
    assert.match(reasons[1]?.[0] ?? '', /^invalid image: empty path component/)
    assert.deepEqual(reasons[2], ['image registry 127.0.0.1:1 is not used by this provider'])
    assert.deepEqual(engine.requests.slice(before), [], 'the engine was asked nothing')
    assert.deepEqual(provider.provider!.declines, { 'invalid image': 2, 'registry not used': 1 })
    assert.deepEqual(provider.ledger!.entries(), [])
  })

  it('ignores a CPU share below 0.01 core: no bid, no reservation', async () => {
    const provider = net.providers[0]
    const tiny = await net.requester.orchestrator!.post(unchecked(TEST_IMAGE, 1e-10))
    const job = await jobReaches(net.requester, tiny.record.id, ['failed', 'completed'])
    assert.equal(job.record.error?.code, 'NO_BIDS')
    assert.deepEqual(job.record.bids, [])
    assert.deepEqual(provider.ledger!.entries(), [])
    // The same request with a real share gets a bid: the provider and its engine are fine.
    const fair = await net.requester.orchestrator!.post({ ...unchecked(TEST_IMAGE, 0.01), maxPrice: 0 })
    const declined = await jobReaches(net.requester, fair.record.id, ['failed'])
    const [d] = declined.record.error?.declines ?? []
    assert.equal(d?.reasons.length, 1, 'the image was found: only the price is wrong')
    assert.match(d.reasons[0], /^price \d+ exceeds the job's max price 0$/)
    assert.ok(engine.requests.includes(`GET /images/${TEST_IMAGE}/json`))
  })
})
