/**
 * The direct-stream reader's bounds (dms/network/frame-reader.ts) on a simulated clock: the read
 * deadline of a partial frame, the unfinished-bytes budget, and streams that end inside a frame.
 */
import assert from 'node:assert/strict'
import * as lp from 'it-length-prefixed'
import { FrameReadError, readFrames, type ReadFault } from '../../../dms/network/frame-reader.js'
import { ReadBudget } from '../../../dms/network/read-budget.js'
import { ManualClock } from '../../../actors/clock.js'

const MAX = 1024
const DEADLINE = 5000

/** A stream the test feeds by hand; `abort` ends its iteration with that error. */
class FakeStream implements AsyncIterable<Uint8Array> {
  aborted?: Error
  private queue: Array<Uint8Array | Error | null> = []
  private wake?: () => void

  push(b: Uint8Array | Error | null): void {
    this.queue.push(b)
    this.wake?.()
  }

  abort(err: Error): void {
    this.aborted = err
    this.push(err)
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      while (this.queue.length === 0) await new Promise<void>((r) => (this.wake = r))
      const next = this.queue.shift()!
      if (next === null) return
      if (next instanceof Error) throw next
      yield next
    }
  }
}

describe('readFrames: a partial frame is bounded in time and bytes', () => {
  let clock: ManualClock
  let budget: ReadBudget
  let stream: FakeStream
  let frames: Buffer[]
  let faults: ReadFault[]
  let done: Promise<void>

  const start = (s = new FakeStream(), conn = 'c1', id = 's1') => {
    const p = readFrames(
      s,
      { connection: conn, stream: id },
      { frame: (b) => frames.push(Buffer.from(b)), fault: (r) => faults.push(r) },
      { clock, budget },
      { maxFrameBytes: MAX, frameReadTimeoutMs: DEADLINE },
    )
    return { s, p }
  }
  /** Resolves once the reader has taken everything pushed so far (it arms or clears its timer then). */
  const settled = () => new Promise<void>((r) => setImmediate(r))

  beforeEach(() => {
    clock = new ManualClock()
    budget = new ReadBudget({ perConnection: 1500, total: 2500 })
    frames = []
    faults = []
    ;({ s: stream, p: done } = start())
  })

  it('delivers complete frames and holds no timer between frames', async () => {
    stream.push(lp.encode.single(Buffer.from('one')).subarray())
    stream.push(lp.encode.single(Buffer.from('two')).subarray())
    await settled()
    assert.deepEqual(frames.map(String), ['one', 'two'])
    assert.equal(clock.pending, 0)
    stream.push(null)
    await done
    assert.deepEqual(faults, [])
  })

  it('aborts a stream whose frame is not complete within the deadline, counted as timeout', async () => {
    const bytes = lp.encode.single(new Uint8Array(MAX)).subarray()
    stream.push(bytes.subarray(0, MAX - 1)) // one byte short, then silence
    await clock.scheduled(DEADLINE)
    assert.equal(budget.total, MAX - 3, 'the body held so far (its 2-byte prefix is read)')
    clock.advance(DEADLINE - 1)
    assert.deepEqual(faults, [])
    clock.advance(1)
    await done
    assert.deepEqual(faults, ['timeout'])
    assert.ok(stream.aborted instanceof FrameReadError && stream.aborted.reason === 'timeout')
    assert.equal(budget.total, 0, 'its bytes are released')
  })

  it('the deadline runs per frame: a frame completed in time re-arms it for the next one', async () => {
    const a = lp.encode.single(new Uint8Array(100)).subarray()
    const b = lp.encode.single(new Uint8Array(100)).subarray()
    stream.push(a.subarray(0, 50))
    await clock.scheduled(DEADLINE)
    clock.advance(DEADLINE - 10)
    stream.push(Buffer.concat([a.subarray(50), b.subarray(0, 10)]))
    await settled()
    assert.equal(frames.length, 1)
    clock.advance(DEADLINE - 1)
    assert.deepEqual(faults, [], 'the second frame has its own deadline')
    stream.push(b.subarray(10))
    await settled()
    assert.equal(frames.length, 2)
    assert.equal(clock.pending, 0)
  })

  it('aborts a stream whose unfinished frame goes over its connection budget (over_budget)', async () => {
    const other = start(new FakeStream(), 'c1', 's2')
    other.s.push(lp.encode.single(new Uint8Array(MAX)).subarray().subarray(0, 800))
    await settled()
    stream.push(lp.encode.single(new Uint8Array(MAX)).subarray().subarray(0, 800))
    await done
    assert.deepEqual(faults, ['over_budget'])
    assert.equal(budget.connectionBytes('c1'), 800 - 2, 'the other stream keeps its share')
    other.s.push(null)
    await other.p
  })

  it('and over the total budget across connections', async () => {
    for (const c of ['c2', 'c3']) {
      const o = start(new FakeStream(), c, 's1')
      o.s.push(lp.encode.single(new Uint8Array(MAX)).subarray().subarray(0, 1000))
    }
    await settled()
    stream.push(lp.encode.single(new Uint8Array(MAX)).subarray().subarray(0, 600))
    await done
    assert.deepEqual(faults, ['over_budget'])
  })

  it('counts a stream that ends inside a length prefix as unfinished', async () => {
    stream.push(new Uint8Array([0x80]))
    stream.push(null)
    await done
    assert.deepEqual(faults, ['unfinished'])
  })

  it('counts a stream that ends, or is reset, inside a frame body as truncated', async () => {
    stream.push(lp.encode.single(new Uint8Array(10)).subarray().subarray(0, 5))
    stream.push(null)
    await done
    const reset = start()
    reset.s.push(lp.encode.single(new Uint8Array(10)).subarray().subarray(0, 5))
    reset.s.push(new Error('stream reset'))
    await reset.p
    assert.deepEqual(faults, ['truncated', 'truncated'])
    assert.equal(clock.pending, 0)
  })

  it('a bad length prefix is reported once, as oversized or malformed, and aborts the stream', async () => {
    stream.push(
      lp.encode
        .single(new Uint8Array(MAX + 1))
        .subarray()
        .subarray(0, 2),
    )
    await done
    const bad = start()
    bad.s.push(new Uint8Array(12).fill(0xff))
    await bad.p
    assert.deepEqual(faults, ['oversized', 'malformed'])
    assert.ok(stream.aborted !== undefined && bad.s.aborted !== undefined)
  })
})
