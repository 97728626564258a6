import assert from 'node:assert/strict'
import { billableMs, costOfMs, escrowFor, isAmount, sum } from '../../../dms/contracts/money.js'

describe('contracts/money (integer micro-tokens)', () => {
  it('accepts only non-negative safe integers as amounts', () => {
    for (const ok of [0, 1, Number.MAX_SAFE_INTEGER]) assert.equal(isAmount(ok), true, String(ok))
    for (const bad of [-1, 0.5, NaN, Infinity, Number.MAX_SAFE_INTEGER + 1, '5', null])
      assert.equal(isAmount(bad), false, String(bad))
  })

  it('prices milliseconds exactly, rounding up to a whole micro-token', () => {
    assert.equal(costOfMs(3_600_000, 3600), 3600) // one hour
    assert.equal(costOfMs(1000, 3600), 1)
    assert.equal(costOfMs(1001, 3600), 2) // a started micro-token is owed
    assert.equal(costOfMs(0, 3600), 0)
    // Beyond float precision: 2^52 ms at 3 600 000/hour is exactly 2^52 micro-tokens.
    assert.equal(costOfMs(2 ** 52, 3_600_000), 2 ** 52)
    assert.throws(() => costOfMs(1.5, 1), /whole number/)
    assert.throws(() => costOfMs(2 ** 53, 3_600_000 * 4), /safe integer/)
  })

  it('escrow is price x max duration, at least the minimum job price; 0 for volunteers', () => {
    assert.equal(escrowFor(3600, 60, 0), 60)
    assert.equal(escrowFor(507, 60, 0), 9) // ceil(8.45)
    assert.equal(escrowFor(3600, 60, 100), 100)
    assert.equal(escrowFor(0, 600, 0), 0)
    assert.throws(() => escrowFor(1.5, 60, 0), /price per hour/)
    assert.throws(() => escrowFor(10, 60, -1), /minimum job price/)
  })

  it('bills wall seconds as whole milliseconds, rounded up and capped at the max duration', () => {
    assert.equal(billableMs(1.0001, 60), 1001)
    assert.equal(billableMs(500, 60), 60_000)
    assert.equal(billableMs(-3, 60), 0)
    assert.equal(billableMs(NaN, 60), 0)
  })

  it('sums exactly and refuses to leave the safe range', () => {
    assert.equal(sum([1, 2, 3]), 6)
    assert.throws(() => sum([Number.MAX_SAFE_INTEGER, 1]), /safe integer/)
  })
})
