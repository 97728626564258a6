/**
 * Quotes with real nodes on 127.0.0.1: `POST /v1/quotes` runs one bid round without locking or
 * contracting and answers the bids (price, start, provider, rank) and the declines with reasons;
 * its requests say they are a quote, so no provider reserves anything: each ledger stays as it
 * was, and nothing is stored.
 * A test executor stands in for Docker (nothing runs).
 */
import assert from 'node:assert/strict'
import { ApiClient, ApiClientError } from '../../../dms/api/client.js'
import type { Quote } from '../../../dms/orchestrator/quote.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import { startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024

describe('quotes: a bid round without a contract', function () {
  this.timeout(60_000)
  let net: TestNetwork
  const executor = new CountingExecutor()

  before(async () => {
    net = await startNetwork(
      [
        { cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 1000 },
        { cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 3000 },
        { cpu: 0.5, memoryBytes: 512 * MiB, perCpuHour: 10 },
      ],
      { components: { executor }, requester: { bidWindowMs: 2000 } },
    )
  })
  after(() => net?.stop())

  it('answers prices and reasons, and leaves every ledger unchanged', async () => {
    const [cheap, dear, small] = net.providers
    const before = net.providers.map((p) => p.ledger!.entries())
    const reserved: string[] = []
    for (const p of net.providers) p.ledger!.onFreed(() => reserved.push(p.peerId))
    const api = new ApiClient(net.requester.socketPath!)
    const quote = await api.ok<Quote>('POST', '/v1/quotes', {
      image: TEST_IMAGE,
      command: ['true'],
      resources: { cpu: 1, memory: '64MiB' },
      maxDuration: 3600,
      maxPrice: 1_000_000,
    })
    assert.deepEqual(
      quote.bids.map((b) => [b.provider, b.rank]),
      [
        [cheap.peerId, 1],
        [dear.peerId, 2],
      ],
    )
    assert.ok(quote.bids[0].total < quote.bids[1].total)
    assert.ok(quote.bids[0].total >= 1000, 'one core for an hour at 1000 per core-hour')
    for (const b of quote.bids)
      assert.ok(b.earliestStart > 0 && b.expectedFinish >= b.earliestStart + 3600_000)
    assert.deepEqual(
      quote.declines.map((d) => d.provider),
      [small.peerId],
    )
    assert.match(quote.declines[0].reasons.join(' '), /not enough cpu/)
    assert.equal(quote.released, 0, 'nothing to release')
    assert.deepEqual(
      net.providers.map((p) => p.ledger!.entries()),
      before,
      'nothing reserved for the quote',
    )
    assert.deepEqual(reserved, [], 'nothing reserved, then freed, meanwhile')
    assert.deepEqual(await net.requester.orchestrator!.list(), [], 'no job stored')
    assert.equal(executor.runs, 0)

    const bad = await api
      .ok('POST', '/v1/quotes', {
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 1 },
        maxDuration: 60,
        maxPrice: 1,
      })
      .catch((err: unknown) => err)
    assert.ok(bad instanceof ApiClientError)
    assert.match(bad.message, /resources\.memory/)
  })
})
