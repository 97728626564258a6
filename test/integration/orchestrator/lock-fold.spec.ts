/**
 * The lock folded into the contract, between real nodes on 127.0.0.1 (a real contract-db, level,
 * libp2p; CountingExecutor, named as such: these tests count requests, not containers): a job is
 * contracted with one request to its provider fewer (no `/dms/job/request`), and a provider that
 * answers as the versions before the fold (terms only for a locked bid) still runs the job, through
 * the job request first. Spec: specs/protocol.md ("The lock folded into the contract").
 */
import assert from 'node:assert/strict'
import { W } from '../../../dms/protocol/behaviours.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import type { DmsNode } from '../../../dms/node.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import { watchProviderCalls, type ProviderCalls } from '../../helpers/provider-calls.js'

const MiB = 1024 * 1024

describe('requester and provider: the lock folded into the contract', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let calls: ProviderCalls
  let current: DmsNode
  let old: DmsNode

  before(async () => {
    let oldPeer = ''
    calls = watchProviderCalls({ withoutFoldedLock: (peer) => peer === oldPeer })
    try {
      net = await startNetwork(
        [
          { cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 1000 },
          { cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 1000 },
        ],
        { components: { executor: new CountingExecutor(5) }, requester: { bidWindowMs: 1000 } },
      )
    } finally {
      calls.stop()
    }
    ;[current, old] = net.providers
    oldPeer = old.peerId
  })
  after(async () => net?.stop())

  const run = async (provider: DmsNode) => {
    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['sh', '-c', 'echo folded'],
        resources: { cpu: 0.25, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1_000_000,
        providers: { allow: [provider.peerId] },
      }),
    )
    const job = await jobReaches(net.requester, posted.record.id)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    assert.equal(job.record.winner?.provider, provider.peerId)
    return job.record
  }

  it('a job is contracted without a job request: the terms lock the reserved bid', async () => {
    const job = await run(current)
    const p = current.peerId
    assert.deepEqual(
      [calls.count(p, W.jobRequest), calls.count(p, W.contractSign), calls.count(p, W.invoke)],
      [0, 1, 1],
      'the contract and the invocation: one request fewer than lock, contract, invocation',
    )
    assert.ok(!job.history.some((h) => h.state === 'requesting'))
  })

  it('a provider without the folded lock: BID_NOT_LOCKED, the job request, the terms again, and the job runs', async () => {
    const job = await run(old)
    const p = old.peerId
    assert.deepEqual(
      [calls.count(p, W.jobRequest), calls.count(p, W.contractSign), calls.count(p, W.invoke)],
      [1, 2, 1],
    )
    assert.deepEqual(job.history.map((h) => h.state).slice(0, 6), [
      'bidding',
      'selecting',
      'contracting',
      'requesting',
      'contracting',
      'invoking',
    ])
    assert.equal(job.refusals, undefined, 'no refusal kept: the same bid was contracted')
  })
})
