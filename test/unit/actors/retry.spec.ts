import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import { DmsError, isCode } from '../../../actors/errors.js'
import { exponential, retry } from '../../../actors/retry.js'

const turn = () => new Promise<void>((r) => setImmediate(r))

/** fn that fails with `codes` in turn, then succeeds; records when each try ran. */
function flaky(clock: ManualClock, codes: string[]) {
  const at: number[] = []
  const fn = (attempt: number) => {
    at.push(clock.now())
    const code = codes[attempt - 1]
    return code === undefined
      ? Promise.resolve(`ok after ${attempt}`)
      : Promise.reject(new DmsError(code, code))
  }
  return { fn, at }
}

describe('actors/retry', () => {
  it('retries with the backoff on the clock until a try succeeds', async () => {
    const clock = new ManualClock(0)
    const { fn, at } = flaky(clock, ['A', 'A', 'A'])
    const p = retry(fn, { attempts: 4, backoffMs: exponential(1000), clock })
    await clock.advanceAsync(1000 + 2000 + 4000)
    assert.equal(await p, 'ok after 4')
    assert.deepEqual(at, [0, 1000, 3000, 7000])
  })

  it('does not try again before its backoff has passed', async () => {
    const clock = new ManualClock(0)
    const { fn, at } = flaky(clock, ['A'])
    const p = retry(fn, { attempts: 2, backoffMs: () => 500, clock })
    await clock.advanceAsync(499)
    assert.deepEqual(at, [0])
    await clock.advanceAsync(1)
    assert.equal(await p, 'ok after 2')
  })

  it('rethrows the last failure once the attempts are spent', async () => {
    const clock = new ManualClock(0)
    const { fn, at } = flaky(clock, ['A', 'B', 'C'])
    const p = retry(fn, { attempts: 3, backoffMs: () => 10, clock })
    const seen = p.catch((err: unknown) => err)
    await clock.advanceAsync(20)
    assert.ok(isCode(await seen, 'C'))
    assert.equal(at.length, 3)
  })

  it('stops at the first failure retryIf refuses', async () => {
    const clock = new ManualClock(0)
    const { fn, at } = flaky(clock, ['UNREACHABLE', 'REFUSED'])
    const retried: number[] = []
    const p = retry(fn, {
      attempts: 5,
      backoffMs: () => 10,
      retryIf: (err) => isCode(err, 'UNREACHABLE'),
      onRetry: (_err, failed, wait) => retried.push(failed, wait),
      clock,
    })
    const seen = p.catch((err: unknown) => err)
    await clock.advanceAsync(10)
    assert.ok(isCode(await seen, 'REFUSED'))
    assert.equal(at.length, 2)
    assert.deepEqual(retried, [1, 10])
  })

  it('an abort during the backoff rejects with its reason and tries no more', async () => {
    const clock = new ManualClock(0)
    const { fn, at } = flaky(clock, ['A', 'A'])
    const ac = new AbortController()
    const p = retry(fn, { attempts: 3, backoffMs: () => 1000, clock, signal: ac.signal })
    await turn()
    ac.abort(new Error('stopping'))
    await assert.rejects(p, /stopping/)
    await clock.advanceAsync(5000)
    assert.equal(at.length, 1)
  })

  it('exponential doubles from its base up to its cap', () => {
    const b = exponential(1000, 5000)
    assert.deepEqual([1, 2, 3, 4, 5].map(b), [1000, 2000, 4000, 5000, 5000])
  })
})
