/**
 * A bid for a later start with real nodes on 127.0.0.1: a provider with one core and `laterBids`
 * runs a job; a second one-core job that may start within ten minutes (`startBy`) gets a bid for
 * when the first one's slot ends, is contracted and invoked, waits for its slot on the provider
 * (heartbeats keep it alive, `job status` says so), and runs as soon as the first one ends.
 */
import assert from 'node:assert/strict'
import { waitingFor } from '../../../dms/cli/job-status.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import type { StoredJob } from '../../../dms/orchestrator/orchestrator.js'
import { HeldExecutor } from '../../helpers/held-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024

describe('a bid for a later start (provider.laterBids)', function () {
  this.timeout(90_000)
  let net: TestNetwork
  const executor = new HeldExecutor()

  before(async () => {
    net = await startNetwork(
      [{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000, policy: { laterBids: true } }],
      { components: { executor }, requester: { bidWindowMs: 2000 } },
    )
  })
  after(async () => {
    executor.open()
    await net?.stop()
  })

  const spec = (over: Record<string, unknown> = {}) =>
    parseJobSpec({
      image: TEST_IMAGE,
      command: ['true'],
      resources: { cpu: 1, memory: '64MiB' },
      maxDuration: 30,
      maxPrice: 1_000_000,
      ...over,
    })

  /** Resolves with the job (with its live updates) once its provider reports `state`. */
  const updated = (id: string, state: string): Promise<StoredJob> =>
    new Promise((resolve, reject) => {
      const off = net.requester.orchestrator!.onUpdate((jobId, u) => {
        if (jobId !== id || u.state !== state) return
        off()
        net.requester.orchestrator!.get(id).then((j) => resolve(j!), reject)
      })
    })

  it('the second job waits for its slot on the busy provider and runs right after the first', async () => {
    const orch = net.requester.orchestrator!
    const first = await orch.post(spec())
    await executor.runsStarted(1)

    const posted = Date.now()
    const second = await orch.post(spec({ startBy: '10m' }))
    const waiting = await updated(second.record.id, 'waiting')
    const bid = waiting.record.bids.find((b) => b.bidId === waiting.record.winner?.bidId)
    assert.ok(bid !== undefined && bid.earliestStart > posted, 'a bid for a later start won')
    assert.equal(executor.started, 1, 'the second job does not run while the first holds the core')
    assert.match(
      waitingFor({ ...waiting.record, state: waiting.state }) ?? '',
      new RegExp(`^waiting for its slot on ${net.providers[0].peerId} \\(starts by .*\\)$`),
    )

    executor.open()
    const done1 = await jobReaches(net.requester, first.record.id)
    const done2 = await jobReaches(net.requester, second.record.id)
    assert.equal(done1.state, 'completed', JSON.stringify(done1.record.error))
    assert.equal(done2.state, 'completed', JSON.stringify(done2.record.error))
    // By the provider's recorded steps: the second run started after the first one ended.
    const end1 = done1.record.updates.find((u) => u.state === 'completed')!.at
    const start2 = done2.record.updates.find((u) => u.state === 'provisioning')!.at
    const waited = done2.record.updates.find((u) => u.state === 'waiting')!.at
    assert.ok(waited < end1, 'the second job was waiting while the first ran')
    assert.ok(start2 >= end1, `second started ${start2 - end1} ms after the first ended`)
    assert.ok(start2 < bid.earliestStart, 'right after the first, not at the (conservative) slot time')
    assert.deepEqual(net.providers[0].ledger!.entries(), [], 'nothing held after both')
  })
})
