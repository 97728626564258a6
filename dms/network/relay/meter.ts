/**
 * The relay's own limits on what it relays, per relayed connection (bytes, duration) and per peer
 * (bytes over a window, relayed connections open at once), enforced by the relay alone.
 *
 * circuit relay v2's own limits are announced to both ends, and an end that is told of a limit
 * marks the relayed connection "limited": libp2p then opens and accepts on it only protocols
 * registered with `runOnLimitedConnection` (identify, ping, DCUtR), never DMS's actor streams,
 * gossipsub or the DHT. So the library's limits stay off (its circuits are announced unlimited)
 * and this meter counts the bytes of each circuit on the relay's two streams, cutting the circuit
 * (both streams aborted: the ends see a closed connection and dial again) when a limit is passed.
 * Spec: specs/protocol.md ("NAT traversal").
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Connection, Stream } from '@libp2p/interface'
import type { Logger } from 'pino'
import type { Clock } from '../../../actors/clock.js'
import { DmsError } from '../../../actors/errors.js'

/** Why a circuit was cut. */
export type CutReason = 'data' | 'duration' | 'peer_data' | 'not_approved'

/** A relayed connection was cut by the relay's limits. */
export class RelayLimitError extends DmsError<{ reason: CutReason }> {
  constructor(reason: CutReason, message: string) {
    super('RELAY_LIMIT', message, { reason })
  }
}

/** The relay's limits (`network.relay`, specs/config.md); 0 = no limit. */
export interface CircuitLimits {
  /** Bytes one relayed connection may carry, both ways together. */
  dataLimitBytes: number
  /** How long one relayed connection may stay open, ms. */
  durationLimitMs: number
  /** Bytes all relayed connections of one peer (at either end) may carry per `peerDataWindowMs`. */
  peerDataLimitBytes: number
  /** The window of `peerDataLimitBytes`, ms. */
  peerDataWindowMs: number
  /** Relayed connections one peer (at either end) may have open at once. */
  maxCircuitsPerPeer: number
}

/**
 * What the meter wraps of a circuit relay v2 server: `onHop`, the handler of each hop stream (the
 * source's end of a circuit; wrapped before the server starts, which registers it), and
 * `stopHop`, which opens the destination's end.
 */
export interface HopServer {
  onHop(stream: Stream, connection: Connection): Promise<void>
  stopHop(opts: { connection: Connection; request: unknown }, options: unknown): Promise<Stream | undefined>
}

interface Circuit {
  src: string
  dst: string
  bytes: number
  streams: Stream[]
  timer?: unknown
}

export class CircuitMeter {
  private readonly open = new Set<Circuit>()
  private readonly byPeer = new Map<string, Set<Circuit>>()
  /** Bytes relayed per peer in its current window. */
  private readonly windows = new Map<string, { start: number; bytes: number }>()
  /** The circuit being opened by a hop stream, from `onHop` to its `stopHop`. */
  private readonly opening = new AsyncLocalStorage<{ src: string; hop: Stream }>()
  /** Circuits cut, by reason. */
  readonly cut: Record<CutReason, number> = { data: 0, duration: 0, peer_data: 0, not_approved: 0 }
  /** Bytes relayed, both ways, all circuits. */
  bytes = 0

  constructor(
    private readonly c: { clock: Clock; log: Logger },
    readonly limits: CircuitLimits,
  ) {}

  /** Circuits open, all or with `peer` at either end. */
  circuits(peer?: string): number {
    return peer === undefined ? this.open.size : (this.byPeer.get(peer)?.size ?? 0)
  }

  /** Bytes relayed to and from `peer` in its current window. */
  relayed(peer: string): number {
    return this.window(peer).bytes
  }

  /** Why `peer` may not open another circuit now, or undefined. */
  refusal(peer: string): 'peer_data' | 'circuits' | undefined {
    const l = this.limits
    if (l.peerDataLimitBytes > 0 && this.window(peer).bytes >= l.peerDataLimitBytes) return 'peer_data'
    if (l.maxCircuitsPerPeer > 0 && this.circuits(peer) >= l.maxCircuitsPerPeer) return 'circuits'
    return undefined
  }

  /** Meters every circuit `server` opens from now on. */
  attach(server: HopServer): void {
    const onHop = server.onHop.bind(server)
    const stopHop = server.stopHop.bind(server)
    server.onHop = (stream, connection) =>
      this.opening.run({ src: connection.remotePeer.toString(), hop: stream }, () =>
        onHop(stream, connection),
      )
    server.stopHop = async (opts, options) => {
      const far = await stopHop(opts, options)
      const opening = this.opening.getStore()
      if (far !== undefined && opening !== undefined)
        this.track(opening.src, opts.connection.remotePeer.toString(), [opening.hop, far])
      return far
    }
  }

  /** Cuts every circuit with `peer` at either end. */
  cutPeer(peer: string, reason: CutReason): void {
    for (const circuit of [...(this.byPeer.get(peer) ?? [])])
      this.close(circuit, reason, `relay: ${peer} is no longer approved`)
  }

  /** Cuts every circuit (the relay stops). */
  stop(): void {
    for (const circuit of [...this.open]) this.forget(circuit)
  }

  private track(src: string, dst: string, streams: Stream[]): void {
    const circuit: Circuit = { src, dst, bytes: 0, streams }
    this.open.add(circuit)
    for (const p of [src, dst]) {
      const set = this.byPeer.get(p) ?? new Set()
      set.add(circuit)
      this.byPeer.set(p, set)
    }
    this.pruneWindows()
    const l = this.limits
    if (l.durationLimitMs > 0)
      circuit.timer = this.c.clock.setTimeout(
        () => this.close(circuit, 'duration', `relay: duration limit of ${l.durationLimitMs} ms reached`),
        l.durationLimitMs,
      )
    for (const s of streams) {
      s.addEventListener('message', (evt) => this.count(circuit, evt.data.byteLength))
      s.addEventListener('close', () => this.forget(circuit))
    }
  }

  private count(circuit: Circuit, n: number): void {
    if (!this.open.has(circuit)) return
    const l = this.limits
    circuit.bytes += n
    this.bytes += n
    const src = this.window(circuit.src)
    const dst = this.window(circuit.dst)
    src.bytes += n
    dst.bytes += n
    if (l.dataLimitBytes > 0 && circuit.bytes > l.dataLimitBytes)
      this.close(circuit, 'data', `relay: data limit of ${l.dataLimitBytes} bytes reached`)
    else if (
      l.peerDataLimitBytes > 0 &&
      (src.bytes > l.peerDataLimitBytes || dst.bytes > l.peerDataLimitBytes)
    ) {
      const peer = src.bytes > l.peerDataLimitBytes ? circuit.src : circuit.dst
      for (const c of [...(this.byPeer.get(peer) ?? [])])
        this.close(
          c,
          'peer_data',
          `relay: ${peer} relayed ${l.peerDataLimitBytes} bytes in ${l.peerDataWindowMs} ms`,
        )
    }
  }

  /** The peer's window, a new one once its time has passed. */
  private window(peer: string): { start: number; bytes: number } {
    const now = this.c.clock.now()
    let w = this.windows.get(peer)
    if (w === undefined || now - w.start >= this.limits.peerDataWindowMs) {
      w = { start: now, bytes: 0 }
      this.windows.set(peer, w)
    }
    return w
  }

  /** Windows past their time with no circuit open go (bounds the map by the peers relayed lately). */
  private pruneWindows(): void {
    if (this.windows.size < 1024) return
    const now = this.c.clock.now()
    for (const [peer, w] of this.windows)
      if (now - w.start >= this.limits.peerDataWindowMs && !this.byPeer.has(peer)) this.windows.delete(peer)
  }

  private close(circuit: Circuit, reason: CutReason, message: string): void {
    if (!this.open.has(circuit)) return
    this.cut[reason]++
    this.c.log.info(
      { src: circuit.src, dst: circuit.dst, bytes: circuit.bytes, reason },
      'relay: relayed connection cut',
    )
    this.forget(circuit)
    const err = new RelayLimitError(reason, message)
    for (const s of circuit.streams) s.abort(err)
  }

  private forget(circuit: Circuit): void {
    if (!this.open.delete(circuit)) return
    if (circuit.timer !== undefined) this.c.clock.clearTimeout(circuit.timer)
    for (const p of [circuit.src, circuit.dst]) {
      const set = this.byPeer.get(p)
      set?.delete(circuit)
      if (set?.size === 0) this.byPeer.delete(p)
    }
  }
}
