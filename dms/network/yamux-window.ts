/**
 * Yamux window updates sent when half the receive window is used, not after every data frame.
 *
 * @chainsafe/libp2p-yamux (8.x) answers every data frame it reads with a window-update frame:
 * on the long-lived actor stream that is one more frame, one more Noise encryption and one more
 * socket write for every message received, on both nodes (a quarter of a requester's socket writes
 * in its profile; specs/benchmarks.md, "Requester CPU per job"). go-yamux and rust-yamux wait
 * until the unannounced space is at least half the window; this does the same. The sender always
 * keeps at least half a window (128 KiB at the start) to send into, so nothing stalls; handshake
 * flags (SYN, ACK) and a paused stream go through as before. Only the receiving side changes:
 * peers of either kind work together. Spec: specs/protocol.md ("Transport").
 */
import { StreamState, YamuxStream } from '@chainsafe/libp2p-yamux/stream'

/** The fields of a yamux stream the decision reads (private in its typings). */
interface WindowState {
  state: StreamState
  recvWindow: number
  recvWindowCapacity: number
}

type Proto = { sendWindowUpdate: (this: WindowState) => void }

const INSTALLED = Symbol.for('dms.yamux.halfWindowUpdates')

/** Whether a window update would be sent now: always for flags and pauses, else at half a window. */
export function windowUpdateDue(s: WindowState): boolean {
  if (s.state !== StreamState.Established) return true
  // Fields this version of the library does not have (an upgrade renamed them): never hold an
  // update back on a guess, or the sender would stall once the window is spent.
  if (typeof s.recvWindow !== 'number' || typeof s.recvWindowCapacity !== 'number') return true
  return s.recvWindow - s.recvWindowCapacity >= s.recvWindow / 2
}

/** Installs the half-window rule on yamux streams of this process (once; later calls do nothing). */
export function halfWindowUpdates(proto: object = YamuxStream.prototype): void {
  const p = proto as Proto & { [INSTALLED]?: true }
  if (p[INSTALLED] === true) return
  const original = p.sendWindowUpdate
  // A library without this method (an upgrade renamed it) keeps its own rule.
  if (typeof original !== 'function') return
  p.sendWindowUpdate = function (this: WindowState) {
    if (windowUpdateDue(this)) original.call(this)
  }
  p[INSTALLED] = true
}
