/**
 * The executor's output reader (dms/executor/common/log-capture.ts) on hand-made engine frames:
 * frames split anywhere across reads are demultiplexed into the two captures; past a stream's cap
 * its bytes are skipped unread; once both streams are over the cap the reader is told to stop
 * (the log flood of the red-team run: the provider no longer reads a byte of it).
 */
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { captureOutput, LogCapture, LogDemux } from '../../../dms/executor/common/log-capture.js'

/** One engine frame: type (1 stdout, 2 stderr), 3 zero bytes, length (BE u32), payload. */
const frame = (type: 1 | 2, text: string | Buffer): Buffer => {
  const body = typeof text === 'string' ? Buffer.from(text) : text
  const h = Buffer.alloc(8)
  h[0] = type
  h.writeUInt32BE(body.length, 4)
  return Buffer.concat([h, body])
}

describe('executor/log-capture: demultiplexing and the cap', () => {
  it('splits frames cut anywhere across reads into stdout and stderr, multi-byte characters kept whole', () => {
    const chunks: string[] = []
    const out = new LogCapture(1000, (t) => chunks.push(`out:${t}`))
    const err = new LogCapture(1000, (t) => chunks.push(`err:${t}`))
    const demux = new LogDemux(out, err, () => assert.fail('not full'))
    const bytes = Buffer.concat([frame(1, 'hello '), frame(2, 'oops\n'), frame(1, 'wörld\n')])
    for (let i = 0; i < bytes.length; i += 3) demux.push(bytes.subarray(i, i + 3))
    assert.equal(out.text(), 'hello wörld\n')
    assert.equal(err.text(), 'oops\n')
    const of = (p: string) =>
      chunks
        .filter((c) => c.startsWith(p))
        .map((c) => c.slice(p.length))
        .join('')
    assert.equal(of('out:'), 'hello wörld\n', 'the log events say what was kept')
    assert.equal(of('err:'), 'oops\n')
    assert.ok(!chunks.some((c) => c.includes('\uFFFD')), 'no character cut between reads')
    assert.deepEqual([out.truncated, err.truncated], [false, false])
  })

  it("past one stream's cap its frames are skipped, the other stream still read", () => {
    const out = new LogCapture(4, () => {})
    const err = new LogCapture(100, () => {})
    let stopped = 0
    const demux = new LogDemux(out, err, () => stopped++)
    demux.push(Buffer.concat([frame(1, 'abcdefgh'), frame(1, 'more'), frame(2, 'still read')]))
    assert.equal(out.text(), 'abcd')
    assert.equal(out.truncated, true)
    assert.equal(err.text(), 'still read')
    assert.equal(stopped, 0)
  })

  it('once both streams are over the cap, reading stops: the stream is closed and nothing more is taken', async () => {
    const stream = new PassThrough()
    let stopped = 0
    let logs = 0
    const { stdout, stderr } = captureOutput(
      stream,
      8,
      () => logs++,
      () => stopped++,
    )
    const closed = new Promise((r) => stream.once('close', r))
    stream.write(frame(1, 'x'.repeat(20)))
    stream.write(frame(2, 'y'.repeat(20)))
    await closed
    assert.equal(stopped, 1)
    assert.equal(stream.destroyed, true, 'the attach is closed: the engine stops sending')
    assert.equal(stream.listenerCount('data'), 0)
    assert.deepEqual([stdout.text(), stderr.text()], ['x'.repeat(8), 'y'.repeat(8)])
    assert.deepEqual([stdout.truncated, stderr.truncated], [true, true])
    assert.equal(logs, 2, 'one log event per kept chunk, none past the cap')
  })
})
