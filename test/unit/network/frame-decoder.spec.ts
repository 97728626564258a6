/** Length-prefixed framing (dms/network/frame-decoder.ts), byte by byte and in bulk. */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import * as lp from 'it-length-prefixed'
import { FrameDecoder, FramingError } from '../../../dms/network/frame-decoder.js'

const MAX = 64 * 1024
const framed = (...frames: Uint8Array[]) => Buffer.concat(frames.map((f) => lp.encode.single(f).subarray()))

describe('FrameDecoder', () => {
  it('splits it-length-prefixed frames however the bytes are chunked', () => {
    const frames = [randomBytes(1), randomBytes(300), new Uint8Array(0), randomBytes(MAX)]
    const bytes = framed(...frames)
    for (const size of [1, 2, 7, 128, 4096, bytes.length]) {
      const d = new FrameDecoder(MAX)
      const out: Uint8Array[] = []
      for (let i = 0; i < bytes.length; i += size) out.push(...d.push(bytes.subarray(i, i + size)))
      assert.deepEqual(
        out.map((f) => Buffer.from(f)),
        frames.map((f) => Buffer.from(f)),
        `chunks of ${size}`,
      )
      assert.equal(d.state, 'idle')
      assert.equal(d.buffered, 0)
    }
  })

  it('reports where an unfinished frame stands and how many bytes it holds', () => {
    const d = new FrameDecoder(MAX)
    const bytes = framed(randomBytes(1000))
    assert.equal(d.state, 'idle')
    d.push(bytes.subarray(0, 1)) // 1000 needs a 2-byte prefix
    assert.deepEqual([d.state, d.buffered], ['prefix', 1])
    d.push(bytes.subarray(1, 500))
    assert.deepEqual([d.state, d.buffered], ['body', 498])
    assert.equal(d.push(bytes.subarray(500)).length, 1)
    assert.deepEqual([d.state, d.buffered], ['idle', 0])
  })

  it('refuses a prefix over the limit as oversized, as soon as the prefix ends', () => {
    const d = new FrameDecoder(MAX)
    const prefix = lp.encode.single(new Uint8Array(MAX + 1)).subarray(0, 3)
    assert.throws(
      () => d.push(prefix),
      (e: unknown) => e instanceof FramingError && e.reason === 'oversized',
    )
  })

  it('refuses a prefix that does not end within 8 bytes as malformed, and waits for a shorter one', () => {
    const d = new FrameDecoder(MAX)
    assert.deepEqual(d.push(new Uint8Array(7).fill(0x80)), [])
    assert.equal(d.state, 'prefix')
    assert.throws(
      () => d.push(new Uint8Array([0x80])),
      (e: unknown) => e instanceof FramingError && e.reason === 'malformed',
    )
  })
})
