import { Writable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'

/**
 * One container stream (stdout or stderr): keeps the first `maxBytes` bytes, reports each kept
 * chunk as text, and keeps draining (and dropping) the rest so a chatty container never blocks on
 * a full pipe.
 */
export class LogCapture extends Writable {
  private readonly kept: Buffer[] = []
  private keptBytes = 0
  private readonly decoder = new StringDecoder('utf8')
  /** true once a byte had to be dropped. */
  truncated = false

  constructor(
    private readonly maxBytes: number,
    private readonly onChunk: (text: string) => void,
  ) {
    super()
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const room = this.maxBytes - this.keptBytes
    if (chunk.length > room) this.truncated = true
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk
      this.kept.push(part)
      this.keptBytes += part.length
      // The decoder holds back a multi-byte character split across chunks.
      const text = this.decoder.write(part)
      if (text !== '') this.emitChunk(text)
    }
    callback()
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
