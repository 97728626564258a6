/**
 * The read side of a direct actor stream: splits it into frames (frame-decoder.ts) and bounds what
 * an unfinished frame may cost. A frame must be complete within `frameReadTimeoutMs` of its first
 * byte, and the bytes held for unfinished frames count against a per-connection and a total
 * budget (read-budget.ts); a stream that breaks either is aborted. A stream that ends inside a
 * frame is counted too. Spec: specs/protocol.md, "Transport".
 */
import type { Uint8ArrayList } from 'uint8arraylist'
import { DmsError } from '../../actors/errors.js'
import type { Clock } from '../../actors/clock.js'
import { FrameDecoder, FramingError, type FramingFault } from './frame-decoder.js'
import type { ReadBudget } from './read-budget.js'

/**
 * Why a stream's reading was given up, or why its last frame was lost:
 * - `oversized`, `malformed`: a bad length prefix (framing is lost);
 * - `timeout`: a frame not complete within the read deadline;
 * - `over_budget`: a frame that would take its connection, or all, over the unfinished-bytes budget;
 * - `unfinished`: the stream ended inside a length prefix;
 * - `truncated`: the stream ended inside a frame body.
 */
export type ReadFault = FramingFault | 'timeout' | 'over_budget' | 'unfinished' | 'truncated'

/** The reader gave up a stream (the error it is aborted with). */
export class FrameReadError extends DmsError {
  constructor(
    readonly reason: ReadFault,
    message: string,
  ) {
    super('FRAME_READ_ERROR', message)
  }
}

/** What the reader needs of a stream (a libp2p Stream is one). */
export interface FrameSource extends AsyncIterable<Uint8Array | Uint8ArrayList> {
  abort(err: Error): void
}

export interface FrameReaderComponents {
  /** Drives the read deadline. */
  clock: Clock
  budget: ReadBudget
}

export interface FrameReaderInit {
  maxFrameBytes: number
  /** Longest a frame may take from its first byte to its last. */
  frameReadTimeoutMs: number
}

export interface FrameReaderHandlers {
  frame(bytes: Uint8Array): void
  fault(reason: ReadFault, detail: string): void
}

/**
 * Reads `stream` to its end, handing each complete frame to `on.frame` in order. Reports at most
 * one fault per stream to `on.fault`; a fault of its own making (bad prefix, deadline, budget)
 * aborts the stream. Never throws: a stream error ends the read.
 */
export async function readFrames(
  stream: FrameSource,
  ids: { connection: string; stream: string },
  on: FrameReaderHandlers,
  c: FrameReaderComponents,
  init: FrameReaderInit,
): Promise<void> {
  const decoder = new FrameDecoder(init.maxFrameBytes)
  let timer: unknown
  let faulted = false
  const disarm = () => {
    if (timer === undefined) return
    c.clock.clearTimeout(timer)
    timer = undefined
  }
  const fail = (reason: ReadFault, detail: string) => {
    if (faulted) return
    faulted = true
    disarm()
    on.fault(reason, detail)
    stream.abort(new FrameReadError(reason, detail))
  }
  /** A stream that stopped inside a frame lost that frame. */
  const endedInside = (how: string) => {
    if (faulted || decoder.state === 'idle') return
    faulted = true
    on.fault(
      decoder.state === 'prefix' ? 'unfinished' : 'truncated',
      `stream ${how} with ${decoder.buffered} bytes of an unfinished frame`,
    )
  }
  try {
    for await (const chunk of stream) {
      let frames: Uint8Array[]
      try {
        frames = decoder.push(chunk)
      } catch (err) {
        if (!(err instanceof FramingError)) throw err
        return fail(err.reason, err.message)
      }
      for (const f of frames) on.frame(f)
      if (!c.budget.set(ids.connection, ids.stream, decoder.buffered))
        return fail(
          'over_budget',
          `${decoder.buffered} bytes of an unfinished frame: over the budget (${c.budget.connectionBytes(ids.connection)} held on this connection, ${c.budget.total} in all)`,
        )
      // The deadline runs from a frame's first byte: re-armed when a new frame starts.
      if (decoder.state === 'idle') disarm()
      else if (timer === undefined || frames.length > 0) {
        disarm()
        timer = c.clock.setTimeout(
          () => fail('timeout', `frame not complete within ${init.frameReadTimeoutMs} ms`),
          init.frameReadTimeoutMs,
        )
      }
    }
    endedInside('ended')
  } catch {
    endedInside('failed')
  } finally {
    disarm()
    c.budget.release(ids.connection, ids.stream)
  }
}
