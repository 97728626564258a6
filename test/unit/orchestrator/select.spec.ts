import assert from 'node:assert/strict'
import type { Bid } from '../../../dms/messages.js'
import { rankBids } from '../../../dms/orchestrator/select.js'

const bid = (bidId: string, total: number, expectedFinish = 1000): Bid => ({
  bidId,
  jobId: 'job-1',
  provider: `peer-${bidId}`,
  resources: { cpu: 1, memoryBytes: 1, diskBytes: 0, gpus: 0 },
  image: 'dms-test:1',
  maxDurationSeconds: 60,
  pricePerHour: total,
  minJobPrice: 0,
  total,
  earliestStart: 0,
  expectedFinish,
  expiresAt: 10_000,
  resourcesReserved: true,
  signature: 'sig',
})

const ids = (ranked: Array<[Bid, string]>) => ranked.map(([b]) => b.bidId)

describe('orchestrator/select rankBids', () => {
  it('puts the lowest total first', () => {
    const ranked = rankBids([bid('a', 300), bid('b', 100), bid('c', 200)])
    assert.deepEqual(ids(ranked), ['b', 'c', 'a'])
  })

  it('breaks a tie on total by earliest expectedFinish', () => {
    const ranked = rankBids([bid('a', 100, 5000), bid('b', 100, 3000), bid('c', 100, 4000)])
    assert.deepEqual(ids(ranked), ['b', 'c', 'a'])
  })

  it('breaks a tie on total and expectedFinish by bidId, whatever the input order', () => {
    const bids = [bid('m', 100), bid('z', 100), bid('a', 100)]
    assert.deepEqual(ids(rankBids(bids)), ['a', 'm', 'z'])
    assert.deepEqual(ids(rankBids([...bids].reverse())), ['a', 'm', 'z'])
  })

  it("explains the winner with its total and the runner-up's total", () => {
    const ranked = rankBids([bid('a', 4321), bid('b', 1234), bid('c', 9999)])
    const [, why] = ranked[0]
    assert.match(why, /1234/)
    assert.match(why, /4321/, 'mentions the runner-up total')
    assert.doesNotMatch(why, /9999/)
    assert.match(why, /3 bids/)
    assert.match(ranked[1][1], /rank 2.*4321/)
    assert.match(ranked[2][1], /rank 3.*9999/)
  })

  it('says when there was only one bid', () => {
    const ranked = rankBids([bid('solo', 77)])
    assert.equal(ranked.length, 1)
    assert.match(ranked[0][1], /only bid.*77/)
  })

  it('returns nothing for no bids and does not reorder its input', () => {
    assert.deepEqual(rankBids([]), [])
    const input = [bid('a', 3), bid('b', 1)]
    rankBids(input)
    assert.deepEqual(
      input.map((b) => b.bidId),
      ['a', 'b'],
    )
  })
})
