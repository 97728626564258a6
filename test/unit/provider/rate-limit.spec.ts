import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import { PeerRateLimiter } from '../../../dms/provider/rate-limit.js'

describe('provider/rate-limit: a token bucket per peer', () => {
  it('allows a burst, then the sustained rate, per peer', () => {
    const clock = new ManualClock()
    const limit = new PeerRateLimiter(clock, { perSecond: 2, burst: 3 })
    const take = (peer: string, n: number) => Array.from({ length: n }, () => limit.take(peer))
    assert.deepEqual(take('a', 4), [true, true, true, false])
    // Another peer has its own bucket.
    assert.deepEqual(take('b', 3), [true, true, true])
    clock.advance(500) // one token back
    assert.deepEqual(take('a', 2), [true, false])
    clock.advance(60_000) // never more than the burst
    assert.deepEqual(take('a', 4), [true, true, true, false])
  })

  it('remembers at most maxPeers peers; a forgotten one starts again with a full bucket', () => {
    const clock = new ManualClock()
    const limit = new PeerRateLimiter(clock, { perSecond: 1, burst: 1, maxPeers: 2 })
    assert.equal(limit.take('a'), true)
    assert.equal(limit.take('a'), false)
    limit.take('b')
    limit.take('c') // 'a' is the least recently seen: forgotten
    assert.equal(limit.take('a'), true)
  })
})
