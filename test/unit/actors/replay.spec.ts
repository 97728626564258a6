import assert from 'node:assert/strict'
import { ReplayCache } from '../../../actors/replay.js'

const nonce = (n: number) => {
  const b = new Uint8Array(16)
  new DataView(b.buffer).setUint32(0, n)
  return b
}

const A = new Uint8Array(32).fill(1)
const B = new Uint8Array(32).fill(2)

describe('actors/replay', () => {
  it('keys on sender and nonce: the same nonce from another sender is not a replay', () => {
    const cache = new ReplayCache()
    assert.equal(cache.check(A, nonce(1), 1000, 0), true)
    assert.equal(cache.check(B, nonce(1), 1000, 0), true, "B's message refused because A used its nonce")
    assert.equal(cache.check(B, nonce(1), 1000, 0), false)
    assert.equal(cache.check(A, nonce(1), 1000, 0), false)
  })

  it('accepts a nonce once and refuses it again before it expires', () => {
    const cache = new ReplayCache()
    assert.equal(cache.check(A, nonce(1), 1000, 0), true)
    assert.equal(cache.check(A, nonce(1), 1000, 0), false)
    assert.equal(cache.check(A, nonce(1), 1000, 999), false)
    assert.equal(cache.check(A, nonce(2), 1000, 0), true, 'another nonce is independent')
  })

  it('compares nonces by content, not by array identity', () => {
    const cache = new ReplayCache()
    assert.equal(cache.check(A, nonce(7), 1000, 0), true)
    assert.equal(cache.check(A, Uint8Array.from(nonce(7)), 1000, 0), false)
  })

  it('accepts the nonce again once its envelope has expired', () => {
    const cache = new ReplayCache()
    assert.equal(cache.check(A, nonce(1), 1000, 0), true)
    assert.equal(cache.check(A, nonce(1), 5000, 1000), true, 'expiresAt <= now: forgotten')
    // ... and it is remembered anew until the new expiry.
    assert.equal(cache.check(A, nonce(1), 5000, 4999), false)
  })

  it('stays bounded when full of unexpired nonces, and remembers the newest', () => {
    const cache = new ReplayCache(10)
    for (let i = 0; i < 100; i++) {
      assert.equal(cache.check(A, nonce(i), 1_000_000, 0), true)
      assert.ok(cache.size <= 10, `size ${cache.size} after ${i + 1} nonces`)
    }
    assert.equal(cache.check(A, nonce(99), 1_000_000, 1), false)
    assert.equal(cache.check(A, nonce(98), 1_000_000, 1), false)
  })

  it('prunes expired nonces first when full', () => {
    const cache = new ReplayCache(10)
    for (let i = 0; i < 10; i++) cache.check(A, nonce(i), 50, 0)
    assert.equal(cache.size, 10)
    assert.equal(cache.check(A, nonce(100), 1000, 60), true)
    assert.equal(cache.size, 1, 'all ten expired entries pruned, only the new one kept')
  })
  it('when full, evicts the entry expiring soonest, not a longer-lived older one', () => {
    const cache = new ReplayCache(10)
    assert.equal(cache.check(A, nonce(0), 300_000, 0), true) // long-lived, inserted first
    for (let i = 1; i < 10; i++) cache.check(A, nonce(i), 1_000, 0)
    cache.check(A, nonce(10), 1_000, 0) // full: something must go
    assert.equal(
      cache.check(A, nonce(0), 300_000, 1),
      false,
      'the long-lived nonce was forgotten and can be replayed',
    )
  })
})
