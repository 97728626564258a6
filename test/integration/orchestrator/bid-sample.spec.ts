/**
 * The bid sample on real nodes (issue 22): with 32 providers subscribed, a job's bid request goes
 * to the first 8 of its per-job order only, so at most 8 providers reserve and bid, and the job
 * completes; a requester that asks everyone (`bidSample: 0`, the old broadcast) still gets a bid
 * from every provider, which answer it unchanged.
 */
import assert from 'node:assert/strict'
import { NoopExecutor } from '../../../dms/executor/noop.js'
import { DEFAULT_BID_SAMPLE, sampleOrder } from '../../../dms/orchestrator/bid-sample.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import type { DmsNode } from '../../../dms/node.js'
import { BID_REQUEST_TOPIC } from '../../../dms/protocol/handles.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024
const PROVIDERS = 32
const LONG = { bidWindowMs: 60_000, bidStragglerMs: 60_000 }
const spec = parseJobSpec({
  image: TEST_IMAGE,
  command: ['true'],
  resources: { cpu: 0.1, memory: '16MiB' },
  maxDuration: 60,
  maxPrice: 1_000_000,
})

/** The providers that hold a bid (live or ended) for `jobId`, from their own books. */
async function biddersOf(net: TestNetwork, jobId: string): Promise<string[]> {
  const out: string[] = []
  for (const p of net.providers)
    if ((await p.provider!.bids.values()).some((r) => r.bid.jobId === jobId)) out.push(p.peerId)
  return out
}

async function run(node: DmsNode) {
  const posted = await node.orchestrator!.post(spec)
  return jobReaches(node, posted.record.id)
}

describe('integration: the bid sample (32 providers)', function () {
  this.timeout(180_000)
  let net: TestNetwork

  before(async () => {
    net = await startNetwork(
      Array.from({ length: PROVIDERS }, (_, i) => ({
        cpu: 8,
        memoryBytes: 8 * 1024 * MiB,
        perCpuHour: 1000 + i,
      })),
      {
        components: { executor: new NoopExecutor() },
        // Windows close on enough bids or when all asked answered, never on a timer: a loaded
        // machine's slow answers must not widen the sample (a window closed on stragglers).
        requester: { enoughBids: 3, ...LONG },
      },
    )
  })
  after(() => net?.stop())

  it('asks only the job sample: at most 8 providers bid, and the job completes', async () => {
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, PROVIDERS)
    const job = await run(net.requester)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    const sample = sampleOrder(
      job.record.id,
      net.providers.map((p) => p.peerId),
      () => false,
    ).slice(0, DEFAULT_BID_SAMPLE)
    const bidders = await biddersOf(net, job.record.id)
    assert.ok(bidders.length >= 3 && bidders.length <= DEFAULT_BID_SAMPLE, `${bidders.length} providers bid`)
    assert.ok(
      bidders.every((p) => sample.includes(p)),
      'only providers of the sample bid',
    )
    assert.ok(job.record.bids.every((b) => sample.includes(b.provider)))
  })

  it('a requester asking everyone on gossip (bidSample 0) gets a bid from every provider', async () => {
    // enoughBids = all of them: the window waits for every answer, so the record shows them all.
    const everyone = await net.addRequester('requester-everyone', {
      bidSample: 0,
      enoughBids: PROVIDERS,
      ...LONG,
    })
    const job = await run(everyone)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    assert.equal(job.record.bids.length, PROVIDERS)
    assert.equal((await biddersOf(net, job.record.id)).length, PROVIDERS)
  })
})
