/**
 * A queued job bids again as soon as a provider comes back, with real nodes on 127.0.0.1: the only
 * provider is stopped, a job posted meanwhile waits in `queued` (its backoff set to ten minutes, so
 * only the provider's return can wake it), and the provider started again gets the job at once:
 * woken by its join of the bid topic (the requester knows it as an approved provider from its
 * earlier capacity news) or by the capacity news it sends on seeing the requester, whichever
 * comes first.
 */
import assert from 'node:assert/strict'
import { DmsNode } from '../../../dms/node.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import {
  jobReaches,
  startNetwork,
  TEST_IMAGE,
  TEST_PASSPHRASE,
  type TestNetwork,
} from '../../helpers/network.js'

const MiB = 1024 * 1024

describe('queued jobs: a provider that joins the bid topic is asked at once', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let again: DmsNode | undefined
  const executor = new CountingExecutor(5)

  before(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      components: { executor },
      requester: { bidWindowMs: 1000, queueRetryMinMs: 600_000, queueRetryMaxMs: 600_000 },
    })
  })
  after(async () => {
    await again?.stop()
    await net?.stop()
  })

  it('a job queued while no provider was there completes once it comes back, woken by its return', async () => {
    const [provider] = net.providers
    const cfg = provider.config
    await provider.stop()
    const orch = net.requester.orchestrator!
    const posted = await orch.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 1, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 100_000,
        queueTimeout: 300,
      }),
    )
    await jobReaches(net.requester, posted.record.id, ['queued'])

    // The same provider (same key, data dir and approval) on a new port, dialling the requester.
    again = new DmsNode(
      { ...cfg, bootstrap: [...(cfg.bootstrap ?? []), ...net.requester.addrs()] },
      { passphrase: TEST_PASSPHRASE, executor },
    )
    await again.start()
    const job = await jobReaches(net.requester, posted.record.id)
    assert.equal(job.state, 'completed', job.record.error?.message)
    assert.ok(
      [`joined ${again.peerId}`, `capacity ${again.peerId}`].includes(job.record.queue?.wokenBy ?? ''),
      job.record.queue?.wokenBy,
    )
    assert.equal(job.record.queue?.rounds, 1, 'one round found no one; the next one, on its return, won')
    assert.equal(orch.joins.woken + orch.capacity.woken, 1)
    assert.equal(executor.runs, 1)
  })
})
