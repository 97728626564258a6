/**
 * The bid-request handler prices a request before it reserves (specs/pricing.md, "Carried in the
 * bid"): a request whose escrow would be beyond any safe amount (a per-second price over a long job,
 * or a hostile peer's huge max duration) is declined as `price`, reserving nothing, instead of
 * throwing inside the handler and leaving the requester without an answer.
 */
import assert from 'node:assert/strict'
import { MAX_PRICE, type PriceTerms } from '../../../../dms/pricing/terms.js'
import { Harness } from '../../../helpers/provider-harness.js'

describe('provider/handlers/bid-request: the price', () => {
  let h: Harness
  beforeEach(async () => {
    h = await new Harness().start()
  })
  afterEach(() => h.close())

  const perSecond: PriceTerms = {
    model: 'per-time',
    unit: 'second',
    currency: 'micro-token',
    rate: MAX_PRICE,
    minimum: 0,
  }
  const reasons = () => {
    const last = h.sent.at(-1)
    assert.equal(last?.behaviour, '/dms/job/decline', JSON.stringify(last?.payload))
    return (last.payload as { reasons: string[] }).reasons
  }

  it('declines a job whose escrow at a per-second price overflows, for a bid and for a quote', async () => {
    // 10^12 a second for a day is 8.64 × 10^16 micro-tokens: past 2^53, no amount can hold it.
    const long = { ...h.request('job-1'), maxDurationSeconds: 86_400 }
    await h.bidRequest({ price: perSecond })(h.msg(long))
    assert.deepEqual(reasons(), ['price 1000000000000/second for 86400s is more than any escrow can hold'])
    const { funds: _, ...quote } = { ...h.request('quote-1'), maxDurationSeconds: 86_400 }
    await h.bidRequest({ price: perSecond })(h.msg({ ...quote, quote: true }))
    assert.match(reasons()[0], /^price .* more than any escrow can hold$/)
    assert.equal(h.counts.declines.price, 2)
    assert.deepEqual(h.ledger.entries(), [], 'nothing reserved')
    assert.deepEqual(h.bids(), [])
  })

  it("declines a peer's max duration too long to price, at the onboarded hourly rates", async () => {
    await h.bidRequest()(h.msg({ ...h.request('job-1'), maxDurationSeconds: Number.MAX_SAFE_INTEGER }))
    assert.match(reasons()[0], /^price \d+\/hour for 9007199254740991s is more than any escrow can hold$/)
    assert.deepEqual(h.ledger.entries(), [])
  })

  it('bids the same price for a job short enough to escrow', async () => {
    // 9007 s at 10^12 a second is 9.007 × 10^15, just under 2^53.
    const req = { ...h.request('job-1'), maxDurationSeconds: 9007, maxPrice: Number.MAX_SAFE_INTEGER }
    await h.bidRequest({ price: perSecond })(h.msg({ ...req, funds: h.funds(h.requester, 10 ** 16) }))
    const [bid] = h.bids()
    assert.equal(bid?.total, 9007 * MAX_PRICE, JSON.stringify(h.sent.at(-1)?.payload))
  })
})
