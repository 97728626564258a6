/**
 * Keeps this node connected to the peers it depends on: the bootstrap list (dialled at start and
 * re-dialled forever after a failed dial or a disconnect) and the peers it has been connected to
 * that identified as DMS nodes (re-dialled after a disconnect until `forgetAfterMs`). Each re-dial waits an exponential backoff
 * on the injected Clock, reset by a connection. Spec: specs/protocol.md ("Staying connected").
 */
import type { Clock } from '../../actors/clock.js'
import type { Logger } from 'pino'

export type PeerIdStr = string
export type PeerEvent = 'connect' | 'disconnect' | 'dms'

/** What the keeper needs from the libp2p host (dms/network/host.ts adapts a Libp2p). */
export interface KeeperHost {
  /** Dials `peer` at `addrs` (or at the addresses the host knows when empty); rejects on failure. */
  dial(peer: PeerIdStr, addrs: string[], signal: AbortSignal): Promise<void>
  /** Whether a connection with `peer` is open. */
  connected(peer: PeerIdStr): boolean
  /**
   * Calls `fn` on each connect / disconnect of a peer, and with `dms` once a connected peer has
   * identified itself as a DMS node (only those become known peers); returns the unsubscribe function.
   */
  onPeer(fn: (peer: PeerIdStr, event: PeerEvent) => void): () => void
}

/** A dial the keeper made: what the tests and `dms peers` logs follow. */
export interface DialEvent {
  peer: PeerIdStr
  /** 0 for the dial at start, then 1, 2... since the last connection. */
  attempt: number
  /** Why the peer is kept. */
  kind: 'bootstrap' | 'known'
  ok: boolean
  error?: string
}

export interface DialKeeperInit {
  /** Bootstrap multiaddrs, each ending in /p2p/<peer id>. @default [] */
  bootstrap?: string[]
  /** First re-dial delay. @default 500 */
  minBackoffMs?: number
  /** Longest re-dial delay (the delay doubles per failed attempt). @default 30000 */
  maxBackoffMs?: number
  /** Peers (not from the bootstrap list) remembered for re-dial, most recently connected kept. @default 64 */
  maxKnownPeers?: number
  /** A known peer unreachable this long is forgotten (bootstrap peers never are). @default 600000 */
  forgetAfterMs?: number
  /** One dial's time limit. @default 10000 */
  dialTimeoutMs?: number
}

interface Kept {
  kind: 'bootstrap' | 'known'
  addrs: string[]
  attempt: number
  timer?: unknown
  /** When the current run of failed re-dials began. */
  lostAt?: number
  dialing: boolean
}

/** The peer id at the end of a multiaddr (`.../p2p/<id>`), or undefined. */
export function peerOfAddr(addr: string): PeerIdStr | undefined {
  const m = /\/p2p\/([^/]+)$/.exec(addr)
  return m?.[1]
}

export class DialKeeper {
  private readonly kept = new Map<PeerIdStr, Kept>()
  private readonly listeners = new Set<(e: DialEvent) => void>()
  private readonly ac = new AbortController()
  private off?: () => void
  private started = false
  private readonly min: number
  private readonly max: number
  private readonly maxKnown: number
  private readonly forgetAfterMs: number
  private readonly dialTimeoutMs: number

  constructor(
    private readonly c: { host: KeeperHost; clock: Clock; log?: Logger },
    init: DialKeeperInit = {},
  ) {
    this.min = init.minBackoffMs ?? 500
    this.max = Math.max(this.min, init.maxBackoffMs ?? 30_000)
    this.maxKnown = init.maxKnownPeers ?? 64
    this.forgetAfterMs = init.forgetAfterMs ?? 600_000
    this.dialTimeoutMs = init.dialTimeoutMs ?? 10_000
    for (const addr of init.bootstrap ?? []) {
      const peer = peerOfAddr(addr)
      if (peer === undefined) continue
      const k = this.kept.get(peer) ?? { kind: 'bootstrap', addrs: [], attempt: 0, dialing: false }
      k.addrs.push(addr)
      this.kept.set(peer, k)
    }
  }

  /** Calls `fn` with each dial the keeper makes; returns the unsubscribe function. */
  onDial(fn: (e: DialEvent) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  /** The delay before re-dial number `attempt` (1-based): min × 2^(attempt-1), capped at max. */
  backoff(attempt: number): number {
    return Math.min(this.max, this.min * 2 ** Math.max(0, Math.min(30, attempt - 1)))
  }

  /** Peers kept for re-dial and why (bootstrap first). */
  keptPeers(): Array<{ peer: PeerIdStr; kind: 'bootstrap' | 'known'; attempt: number }> {
    return [...this.kept]
      .map(([peer, k]) => ({ peer, kind: k.kind, attempt: k.attempt }))
      .sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'bootstrap' ? -1 : 1))
  }

  /** Dials the bootstrap list and follows connections. Idempotent. */
  start(): void {
    if (this.started) return
    this.started = true
    this.off = this.c.host.onPeer((peer, event) =>
      event === 'disconnect' ? this.disconnected(peer) : this.connected(peer, event === 'dms'),
    )
    for (const [peer, k] of this.kept) if (!this.c.host.connected(peer)) this.dial(peer, k)
  }

  /** Stops every timer and dial in flight. Idempotent. */
  stop(): void {
    this.off?.()
    this.off = undefined
    this.ac.abort()
    for (const k of this.kept.values()) if (k.timer !== undefined) this.c.clock.clearTimeout(k.timer)
  }

  private connected(peer: PeerIdStr, dms: boolean): void {
    let k = this.kept.get(peer)
    if (k === undefined) {
      if (!dms) return
      k = { kind: 'known', addrs: [], attempt: 0, dialing: false }
      this.kept.set(peer, k)
      this.trimKnown()
    }
    if (k.timer !== undefined) this.c.clock.clearTimeout(k.timer)
    k.timer = undefined
    k.attempt = 0
    k.lostAt = undefined
    if (k.kind === 'known') {
      // Most recently connected last, so trimming drops the longest-unseen peers first.
      this.kept.delete(peer)
      this.kept.set(peer, k)
    }
  }

  private disconnected(peer: PeerIdStr): void {
    const k = this.kept.get(peer)
    if (k === undefined || this.ac.signal.aborted) return
    if (this.c.host.connected(peer)) return
    k.lostAt ??= this.c.clock.now()
    this.schedule(peer, k)
  }

  private trimKnown(): void {
    const known = [...this.kept].filter(([, k]) => k.kind === 'known')
    for (const [peer, k] of known.slice(0, Math.max(0, known.length - this.maxKnown))) {
      if (k.timer !== undefined) this.c.clock.clearTimeout(k.timer)
      this.kept.delete(peer)
    }
  }

  private schedule(peer: PeerIdStr, k: Kept): void {
    if (k.timer !== undefined || k.dialing || this.ac.signal.aborted) return
    if (k.kind === 'known' && k.lostAt !== undefined && this.c.clock.now() - k.lostAt >= this.forgetAfterMs) {
      this.kept.delete(peer)
      this.c.log?.info({ peer }, 'gave up re-dialling a peer')
      return
    }
    k.attempt += 1
    k.timer = this.c.clock.setTimeout(() => {
      k.timer = undefined
      if (!this.c.host.connected(peer)) this.dial(peer, k)
    }, this.backoff(k.attempt))
  }

  private dial(peer: PeerIdStr, k: Kept): void {
    if (k.dialing || this.ac.signal.aborted) return
    k.dialing = true
    const attempt = k.attempt
    const signal = AbortSignal.any([this.ac.signal, AbortSignal.timeout(this.dialTimeoutMs)])
    this.c.host.dial(peer, k.addrs, signal).then(
      () => {
        k.dialing = false
        if (attempt > 0) this.c.log?.info({ peer, attempt, kind: k.kind }, 're-dialled a peer')
        this.emit({ peer, attempt, kind: k.kind, ok: true })
      },
      (err: unknown) => {
        k.dialing = false
        if (this.ac.signal.aborted) return
        const error = err instanceof Error ? err.message : String(err)
        this.c.log?.debug({ peer, attempt, kind: k.kind, err: error }, 'dial failed')
        this.emit({ peer, attempt, kind: k.kind, ok: false, error })
        k.lostAt ??= this.c.clock.now()
        if (this.kept.get(peer) === k && !this.c.host.connected(peer)) this.schedule(peer, k)
      },
    )
  }

  private emit(e: DialEvent): void {
    for (const fn of [...this.listeners]) fn(e)
  }
}
