/**
 * The fixed price end to end (specs/pricing.md, "Fixed"): a provider configured with
 * `provider.price: { model: 'fixed', amount }` quotes and bids that price whatever the job's
 * duration, the contract locks exactly it, and a run that ends on its own pays it all, a failed
 * program too (where a per-result price pays nothing). Real nodes on 127.0.0.1, a real
 * contract-db, real Docker.
 */
import assert from 'node:assert/strict'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { priceOf } from '../../../dms/pricing/terms.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024
const PRICE = 700

describe('fixed price over real nodes and a real contract-db', function () {
  this.timeout(90_000)
  let net: TestNetwork

  before(async () => {
    net = await startNetwork(
      [
        {
          cpu: 1,
          memoryBytes: 512 * MiB,
          perCpuHour: 3_600_000,
          policy: { price: { model: 'fixed', currency: 'micro-token', amount: PRICE } },
        },
      ],
      { requester: { bidWindowMs: 1500 }, fund: 10_000 },
    )
  })
  after(async () => {
    await net?.stop()
  })

  const spec = (command: string) =>
    parseJobSpec({
      image: TEST_IMAGE,
      command: ['sh', '-c', command],
      resources: { cpu: 0.5, memory: '64MiB' },
      maxDuration: 600,
      maxPrice: 5000,
    })
  const account = (peer: string) => net.contractDb.service.account(peer)

  it('quotes the fixed price, whatever the duration', async () => {
    const q = await net.requester.orchestrator!.quote(spec('echo hi'))
    assert.equal(q.bids.length, 1, JSON.stringify(q.declines))
    assert.equal(q.bids[0].total, PRICE, 'per hour, 600 s at 3 600 000/hour would be 600 000')
    assert.equal(q.bids[0].price, `${PRICE} fixed`)
    assert.equal(q.bids[0].pricePerHour, undefined)
  })

  it('a completed run and a failed program each settle exactly the price', async () => {
    const provider = net.providers[0].peerId
    const requester = net.requester.peerId
    const run = async (command: string) =>
      jobReaches(net.requester, (await net.requester.orchestrator!.post(spec(command))).record.id)
    const ok = await run('echo done')
    assert.equal(ok.state, 'completed', JSON.stringify(ok.record.error))
    const t = ok.record.contract!.terms
    assert.deepEqual(priceOf(t.bid), { model: 'fixed', currency: 'micro-token', amount: PRICE })
    assert.equal(t.escrow, PRICE)
    assert.deepEqual(
      { paid: ok.record.settlement?.paidToProvider, refunded: ok.record.settlement?.refundedToRequester },
      { paid: PRICE, refunded: 0 },
    )

    const bad = await run('exit 3')
    assert.equal(bad.record.result?.receipt.receipt.status, 'failed')
    assert.equal(bad.record.result?.receipt.receipt.exitCode, 3)
    assert.deepEqual(
      { paid: bad.record.settlement?.paidToProvider, refunded: bad.record.settlement?.refundedToRequester },
      { paid: PRICE, refunded: 0 },
      'the time was bought, whatever the program did with it',
    )
    assert.deepEqual(await account(requester), { peer: requester, balance: 10_000 - 2 * PRICE, escrow: 0 })
    assert.equal((await account(provider)).balance, 2 * PRICE)
  })
})
