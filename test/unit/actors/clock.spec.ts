import assert from 'node:assert/strict'
import { delay, every, ManualClock, systemClock, timeoutSignal, TimeoutError } from '../../../actors/clock.js'

const turn = () => new Promise<void>((r) => setImmediate(r))

describe('actors/clock', () => {
  describe('ManualClock', () => {
    it('runs due timers in time order, each at its own time, and moves only when told', () => {
      const clock = new ManualClock(1000)
      const seen: Array<[string, number]> = []
      clock.setTimeout(() => seen.push(['b', clock.now()]), 20)
      clock.setTimeout(() => seen.push(['a', clock.now()]), 10)
      clock.setTimeout(() => seen.push(['c', clock.now()]), 20)
      assert.equal(clock.pending, 3)
      clock.advance(9)
      assert.deepEqual(seen, [])
      assert.equal(clock.now(), 1009)
      clock.advance(11)
      assert.deepEqual(seen, [
        ['a', 1010],
        ['b', 1020],
        ['c', 1020],
      ])
      assert.equal(clock.pending, 0)
    })

    it('fires timers armed by a timer when they fall due within the same advance; cleared ones never', () => {
      const clock = new ManualClock(0)
      const seen: number[] = []
      const dropped = clock.setTimeout(() => seen.push(-1), 5)
      clock.setTimeout(() => {
        seen.push(clock.now())
        clock.setTimeout(() => seen.push(clock.now()), 10)
      }, 10)
      clock.clearTimeout(dropped)
      clock.advance(15)
      assert.deepEqual(seen, [10])
      assert.equal(clock.nextAt(), 20)
      clock.advance(5)
      assert.deepEqual(seen, [10, 20])
    })

    it('advanceAsync lets code that awaits a timer arm the next one', async () => {
      const clock = new ManualClock(0)
      const seen: number[] = []
      const loop = (async () => {
        for (let i = 0; i < 3; i++) {
          await delay(100, { clock })
          seen.push(clock.now())
        }
      })()
      // The sync advance runs the first timer only: the loop has not come back to arm the next.
      await clock.advanceAsync(300)
      await loop
      assert.deepEqual(seen, [100, 200, 300])
    })

    it('scheduled() resolves once a timer of that length is armed', async () => {
      const clock = new ManualClock(0)
      let armed = false
      const p = clock.scheduled(250).then(() => (armed = true))
      clock.setTimeout(() => undefined, 100)
      await turn()
      assert.equal(armed, false)
      clock.setTimeout(() => undefined, 250)
      await p
      assert.equal(armed, true)
    })
  })

  describe('delay', () => {
    it('resolves after ms on the clock, not before', async () => {
      const clock = new ManualClock(0)
      let done = false
      const p = delay(50, { clock }).then(() => (done = true))
      clock.advance(49)
      await turn()
      assert.equal(done, false)
      clock.advance(1)
      await p
      assert.equal(done, true)
    })

    it('rejects with the signal reason when aborted, and clears its timer', async () => {
      const clock = new ManualClock(0)
      const ac = new AbortController()
      const p = delay(50, { clock, signal: ac.signal })
      assert.equal(clock.pending, 1)
      ac.abort(new Error('give up'))
      await assert.rejects(p, /give up/)
      assert.equal(clock.pending, 0)
      await assert.rejects(delay(1, { clock, signal: ac.signal }), /give up/, 'already aborted: at once')
    })
  })

  describe('timeoutSignal', () => {
    it('aborts with a TimeoutError after ms, or with the parent reason first', () => {
      const clock = new ManualClock(0)
      const s = timeoutSignal(100, { clock })
      clock.advance(99)
      assert.equal(s.aborted, false)
      clock.advance(1)
      assert.ok(s.reason instanceof TimeoutError)
      assert.equal(s.reason.code, 'TIMEOUT')

      const parent = new AbortController()
      const t = timeoutSignal(100, { clock, signal: parent.signal })
      parent.abort(new Error('parent'))
      assert.match(String(t.reason), /parent/)
      assert.equal(clock.pending, 0, 'its timer is cleared')
    })
  })

  describe('every', () => {
    it('calls fn every ms until stopped; a throwing call does not stop it', () => {
      const clock = new ManualClock(0)
      const at: number[] = []
      const stop = every(clock, 10, () => {
        at.push(clock.now())
        if (at.length === 2) throw new Error('ignored')
      })
      clock.advance(35)
      assert.deepEqual(at, [10, 20, 30])
      stop()
      clock.advance(100)
      assert.deepEqual(at, [10, 20, 30])
      assert.equal(clock.pending, 0)
    })
  })

  it('systemClock timers never hold the process open (unref), and can be cleared', () => {
    const handle = systemClock.setTimeout(() => assert.fail('cleared'), 10_000) as NodeJS.Timeout
    assert.equal(handle.hasRef(), false)
    systemClock.clearTimeout(handle)
  })
})
