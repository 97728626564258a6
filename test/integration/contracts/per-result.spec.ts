/**
 * The per-result price end to end (specs/pricing.md, "Per result"): a provider configured with
 * `provider.price: { model: 'per-result', amount }` quotes and bids that price whatever the job's
 * duration, the contract locks exactly it, a completed run pays it all and a failed run pays
 * nothing. Real nodes on 127.0.0.1, a real contract-db, real Docker.
 */
import assert from 'node:assert/strict'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { priceOf } from '../../../dms/pricing/terms.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024
const PRICE = 700

describe('per-result price over real nodes and a real contract-db', function () {
  this.timeout(90_000)
  let net: TestNetwork

  before(async () => {
    net = await startNetwork(
      [
        {
          cpu: 1,
          memoryBytes: 512 * MiB,
          perCpuHour: 3_600_000,
          policy: { price: { model: 'per-result', currency: 'micro-token', amount: PRICE } },
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

  it('quotes the per-result price, whatever the duration', async () => {
    const q = await net.requester.orchestrator!.quote(spec('echo hi'))
    assert.equal(q.bids.length, 1, JSON.stringify(q.declines))
    assert.equal(q.bids[0].total, PRICE, 'per hour, 600 s at 3 600 000/hour would be 600 000')
    assert.equal(q.bids[0].price, `${PRICE} per result`)
    assert.equal(q.bids[0].pricePerHour, undefined)
  })

  it('a completed run settles exactly the price; a failed run pays nothing and refunds all', async () => {
    const provider = net.providers[0].peerId
    const requester = net.requester.peerId
    const ok = await jobReaches(
      net.requester,
      (await net.requester.orchestrator!.post(spec('echo done'))).record.id,
    )
    assert.equal(ok.state, 'completed', JSON.stringify(ok.record.error))
    const t = ok.record.contract!.terms
    assert.deepEqual(priceOf(t.bid), { model: 'per-result', currency: 'micro-token', amount: PRICE })
    assert.equal(t.pricePerHour, undefined, 'the terms copy no price')
    assert.equal(t.escrow, PRICE)
    assert.equal(ok.record.result?.receipt.receipt.status, 'completed')
    assert.deepEqual(
      { paid: ok.record.settlement?.paidToProvider, refunded: ok.record.settlement?.refundedToRequester },
      { paid: PRICE, refunded: 0 },
    )
    assert.deepEqual(await account(requester), { peer: requester, balance: 10_000 - PRICE, escrow: 0 })
    assert.equal((await account(provider)).balance, PRICE)

    const bad = await jobReaches(
      net.requester,
      (await net.requester.orchestrator!.post(spec('exit 3'))).record.id,
    )
    assert.equal(bad.record.result?.receipt.receipt.status, 'failed')
    assert.equal(bad.record.contract!.terms.escrow, PRICE)
    assert.deepEqual(
      { paid: bad.record.settlement?.paidToProvider, refunded: bad.record.settlement?.refundedToRequester },
      { paid: 0, refunded: PRICE },
    )
    assert.deepEqual(await account(requester), { peer: requester, balance: 10_000 - PRICE, escrow: 0 })
    assert.equal((await account(provider)).balance, PRICE, 'nothing more for the failed run')
  })
})
