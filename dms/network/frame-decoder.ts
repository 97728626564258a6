import { DmsError } from '../../actors/errors.js'
import { Uint8ArrayList } from 'uint8arraylist'

/** Why bytes on a direct stream could not be framed. Spec: specs/protocol.md, "Transport". */
export type FramingFault = 'oversized' | 'malformed'

/** The stream's framing is lost: its bytes cannot be split into frames any more. */
export class FramingError extends DmsError {
  constructor(
    readonly reason: FramingFault,
    message: string,
  ) {
    super('FRAMING_ERROR', message)
  }
}

/** Where a decoder stands: between frames, inside a length prefix, or inside a frame body. */
export type DecoderState = 'idle' | 'prefix' | 'body'

/** Longest length prefix accepted (as it-length-prefixed: 8 bytes of unsigned varint). */
const MAX_PREFIX_BYTES = 8

/**
 * Splits a byte stream into frames, each an unsigned-varint length then that many bytes (the
 * it-length-prefixed format). Pure and incremental: `push` takes whatever arrived and returns the
 * frames it completed; `buffered` is what it holds of the frame still unfinished, which the reader
 * bounds (a byte budget and a read deadline, frame-reader.ts).
 */
export class FrameDecoder {
  private readonly buf = new Uint8ArrayList()
  /** Body length once the prefix is read; undefined while reading a prefix. */
  private want: number | undefined

  constructor(private readonly maxFrameBytes: number) {}

  /** Bytes held for the unfinished frame (prefix or body). */
  get buffered(): number {
    return this.buf.byteLength
  }

  get state(): DecoderState {
    if (this.want !== undefined) return 'body'
    return this.buf.byteLength > 0 ? 'prefix' : 'idle'
  }

  /**
   * Appends `chunk` and returns the frames it completed, in order. Throws FramingError for a
   * prefix over `maxFrameBytes` (`oversized`) or one not ended within 8 bytes (`malformed`);
   * the decoder is unusable afterwards.
   */
  push(chunk: Uint8Array | Uint8ArrayList): Uint8Array[] {
    this.buf.append(chunk)
    const frames: Uint8Array[] = []
    for (;;) {
      if (this.want === undefined) {
        const prefix = this.readPrefix()
        if (prefix === undefined) return frames
        this.buf.consume(prefix.bytes)
        this.want = prefix.length
      }
      if (this.buf.byteLength < this.want) return frames
      frames.push(this.buf.subarray(0, this.want))
      this.buf.consume(this.want)
      this.want = undefined
    }
  }

  /** The length prefix at the head of the buffer, or undefined while it is incomplete. */
  private readPrefix(): { length: number; bytes: number } | undefined {
    let length = 0
    const n = Math.min(this.buf.byteLength, MAX_PREFIX_BYTES)
    for (let i = 0; i < n; i++) {
      const b = this.buf.get(i)
      length += (b & 0x7f) * 2 ** (7 * i)
      if ((b & 0x80) === 0) {
        if (length > this.maxFrameBytes)
          throw new FramingError(
            'oversized',
            `frame of ${length} bytes announced, limit ${this.maxFrameBytes}`,
          )
        return { length, bytes: i + 1 }
      }
    }
    if (n >= MAX_PREFIX_BYTES)
      throw new FramingError('malformed', `length prefix longer than ${MAX_PREFIX_BYTES} bytes`)
    return undefined
  }
}
