import assert from 'node:assert/strict'
import type { Bid } from '../../../dms/contracts/model.js'
import { rankBids, reliabilityOf, scoreBids } from '../../../dms/orchestrator/select.js'

const bid = (bidId: string, total: number, over: Partial<Bid> = {}): Bid => ({
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
  expectedFinish: 1000,
  expiresAt: 10_000,
  resourcesReserved: true,
  signature: 'sig',
  ...over,
})

const ctx = (reliability: Record<string, number> = {}) => ({
  maxPrice: 1000,
  maxDurationSeconds: 60,
  reliability,
  now: 0,
})
const ids = (ranked: Array<[Bid, string]>) => ranked.map(([b]) => b.bidId)

describe('orchestrator/select weighted ranking', () => {
  it('with all else equal, puts the lowest total first', () => {
    assert.deepEqual(ids(rankBids([bid('a', 300), bid('b', 100), bid('c', 200)], ctx())), ['b', 'c', 'a'])
  })

  it('scores exactly by the documented weights, finish computed from the start it can check', () => {
    // price 0.2, finish 0.5 (starts 30 s later than the earliest, max duration 60 s), reliability 0.75.
    const [late] = scoreBids(
      [bid('x', 200, { earliestStart: 30_000 }), bid('y', 1000, { earliestStart: 0 })],
      ctx({ 'peer-x': 0.75 }),
    ).filter((r) => r.bidId === 'x')
    assert.equal(late.score, Math.round((0.6 * 0.2 + 0.2 * 0.5 + 0.2 * 0.25) * 1000) / 1000)
  })

  it('no self-reported number wins: a start before now counts as now, expectedFinish is ignored', () => {
    const honest = bid('honest', 100, { earliestStart: 5000, expectedFinish: 65_000 })
    const liar = bid('liar', 100, { earliestStart: -1e12, expectedFinish: -1e12 })
    const ranked = scoreBids([liar, honest], { ...ctx(), now: 5000 })
    assert.deepEqual(
      ranked.map((r) => r.terms.finish),
      [0, 0],
    )
    // Equal on every checked fact: the tie goes to the bid id, not to the lie.
    assert.deepEqual(
      ranked.map((r) => r.bidId),
      ['honest', 'liar'],
    )
  })

  it('prefers a reliable provider over a slightly cheaper unreliable one', () => {
    const ranked = rankBids(
      [bid('cheap', 100), bid('solid', 150)],
      ctx({ 'peer-cheap': 0.1, 'peer-solid': 0.9 }),
    )
    assert.deepEqual(ids(ranked), ['solid', 'cheap'])
    assert.match(ranked[0][1], /unreliability 0\.1/)
  })

  it('breaks ties deterministically by bid id, whatever the input order', () => {
    const bids = [bid('m', 100), bid('z', 100), bid('a', 100)]
    assert.deepEqual(ids(rankBids(bids, ctx())), ['a', 'm', 'z'])
    assert.deepEqual(ids(rankBids([...bids].reverse(), ctx())), ['a', 'm', 'z'])
  })

  it('explains the winner: its total, its terms and the runner-up', () => {
    const ranked = rankBids([bid('a', 432), bid('b', 123), bid('c', 999)], ctx())
    assert.match(ranked[0][1], /lowest score of 3 bids: total 123, score/)
    assert.match(ranked[0][1], /next peer-a scored/)
    assert.match(ranked[1][1], /^rank 2/)
    assert.match(rankBids([bid('solo', 77)], ctx())[0][1], /only bid: total 77/)
  })

  it('reliability starts at 0.5 and follows completed jobs and faults', () => {
    assert.equal(reliabilityOf(undefined), 0.5)
    assert.equal(reliabilityOf({ completed: 3, faults: 0 }), 0.8)
    assert.equal(reliabilityOf({ completed: 0, faults: 2 }), 0.25)
  })
})
