/**
 * A burst of 80 jobs posted at once to two small providers (room for two jobs each: 20 times what
 * they hold): every job completes. Without queueing most fail NO_BIDS (both providers reserve for the same first jobs,
 * and NO_BIDS is final); queued jobs bid again when a provider announces freed capacity. Real
 * nodes on 127.0.0.1 and a test executor (short runs, no Docker). The drain time is measured by
 * scripts/bench-queue.ts (specs/benchmarks.md).
 */
import assert from 'node:assert/strict'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024
const JOBS = 80

describe('queued jobs: a burst of 80 jobs on two small providers', function () {
  this.timeout(300_000)
  let net: TestNetwork
  const executor = new CountingExecutor(5)

  before(async () => {
    const small = { cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }
    net = await startNetwork([small, small], {
      components: { executor },
      requester: { bidWindowMs: 1000, queueTimeoutSeconds: 600 },
    })
  })
  after(() => net?.stop())

  it('every job ends completed, none lost, never more at once than the offers hold', async () => {
    const orch = net.requester.orchestrator!
    const spec = parseJobSpec({
      image: TEST_IMAGE,
      command: ['true'],
      resources: { cpu: 0.5, memory: '32MiB', disk: '64MiB' },
      maxDuration: 60,
      maxPrice: 100_000,
    })
    const posted = await Promise.all(Array.from({ length: JOBS }, () => orch.post(spec)))
    const ended = await Promise.all(posted.map((p) => jobReaches(net.requester, p.record.id)))
    const byState: Record<string, number> = {}
    for (const j of ended) byState[j.state] = (byState[j.state] ?? 0) + 1
    assert.deepEqual(
      byState,
      { completed: JOBS },
      JSON.stringify(ended.find((j) => j.state !== 'completed')?.record.error),
    )
    assert.equal(executor.runs, JOBS)
    assert.ok(executor.maxRunning <= 4, `two providers with room for two each (${executor.maxRunning})`)
  })
})
