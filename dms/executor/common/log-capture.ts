import { StringDecoder } from 'node:string_decoder'
import type { ExecutionEvent } from '../executor.js'

/**
 * One container stream (stdout or stderr): keeps the first `maxBytes` bytes and reports each kept
 * chunk as text. Past the cap a chunk is only counted: never copied, decoded or reported.
 */
export class LogCapture {
  private readonly kept: Buffer[] = []
  private keptBytes = 0
  private readonly decoder = new StringDecoder('utf8')
  /** true once a byte had to be dropped. */
  truncated = false

  constructor(
    private readonly maxBytes: number,
    private readonly onChunk: (text: string) => void,
  ) {}

  /** true once the cap is reached: nothing more would be kept. */
  get full(): boolean {
    return this.keptBytes >= this.maxBytes
  }

  /** Takes one chunk of the stream (a view: the bytes kept are copied, the rest is not touched). */
  take(chunk: Buffer): void {
    const room = this.maxBytes - this.keptBytes
    if (chunk.length > room) this.truncated = true
    if (room <= 0) return
    const part = Buffer.from(chunk.subarray(0, Math.min(room, chunk.length)))
    this.kept.push(part)
    this.keptBytes += part.length
    // The decoder holds back a multi-byte character split across chunks.
    const text = this.decoder.write(part)
    if (text !== '') this.emitChunk(text)
  }

  /** Reports a character still held by the decoder (call once the stream has ended). */
  flushText(): void {
    const rest = this.decoder.end()
    if (rest !== '') this.emitChunk(rest)
  }

  /** Everything kept, as text (a character cut by the cap becomes U+FFFD). */
  text(): string {
    return Buffer.concat(this.kept).toString('utf8')
  }

  private emitChunk(text: string): void {
    try {
      this.onChunk(text)
    } catch {
      // A failing listener must not break the capture.
    }
  }
}

/**
 * Splits the engine's multiplexed attach/logs stream (frames of an 8-byte header: stream type,
 * 3 zero bytes, big-endian payload length; then the payload) into the two captures, by views into
 * each chunk read. A frame for a capture that is full is skipped by length, unread. Once both
 * captures are full, `onBothFull` is called once: the caller stops reading the stream.
 */
export class LogDemux {
  private readonly header = Buffer.alloc(8)
  private headerBytes = 0
  private target: LogCapture | undefined
  private remaining = 0
  private ended = false

  constructor(
    private readonly stdout: LogCapture,
    private readonly stderr: LogCapture,
    private readonly onBothFull: () => void,
  ) {}

  push(chunk: Buffer): void {
    let at = 0
    while (at < chunk.length && !this.ended) {
      if (this.remaining === 0) {
        const n = Math.min(8 - this.headerBytes, chunk.length - at)
        chunk.copy(this.header, this.headerBytes, at, at + n)
        this.headerBytes += n
        at += n
        if (this.headerBytes < 8) return
        this.headerBytes = 0
        const type = this.header[0]
        this.target = type === 1 ? this.stdout : type === 2 ? this.stderr : undefined
        this.remaining = this.header.readUInt32BE(4)
        continue
      }
      const n = Math.min(this.remaining, chunk.length - at)
      if (this.target !== undefined && !this.target.full) this.target.take(chunk.subarray(at, at + n))
      else if (this.target !== undefined) this.target.truncated = true
      this.remaining -= n
      at += n
      if (this.stdout.full && this.stderr.full && this.stdout.truncated && this.stderr.truncated) {
        this.ended = true
        this.onBothFull()
      }
    }
  }
}

/**
 * Reads a container's multiplexed output `stream` into two captures of `maxBytes` each, each kept
 * chunk emitted as a `log` event. Past the cap of both streams the output is no longer read at
 * all: the stream is closed (the attach ends; the container keeps writing to the engine's own
 * capped log copy) and `onStopped` is called; past one stream's cap, its frames are skipped unread
 * (specs/executor.md, "Output and logs").
 */
export function captureOutput(
  stream: NodeJS.ReadableStream & Partial<{ destroy: () => void }>,
  maxBytes: number,
  emit: (event: ExecutionEvent) => void,
  onStopped: () => void,
): { stdout: LogCapture; stderr: LogCapture } {
  const stdout = new LogCapture(maxBytes, (chunk) => emit({ type: 'log', stream: 'stdout', chunk }))
  const stderr = new LogCapture(maxBytes, (chunk) => emit({ type: 'log', stream: 'stderr', chunk }))
  const onData = (chunk: Buffer): void => demux.push(chunk)
  const demux = new LogDemux(stdout, stderr, () => {
    stream.removeListener('data', onData)
    stream.destroy?.()
    onStopped()
  })
  stream.on('data', onData)
  return { stdout, stderr }
}
