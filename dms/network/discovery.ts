/**
 * Discovery beyond a static list: the kad-dht (peer routing: a peer id is enough to dial a peer)
 * with a bounded routing table, and a rendezvous on it: providers announce themselves under one
 * DHT key, and every node with the DHT looks that key up now and then and dials the providers it
 * is not yet connected to (bounded). mDNS (host.ts) stays for LANs. Spec: specs/protocol.md
 * ("Discovery").
 */
import type { kadDHT } from '@libp2p/kad-dht'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import type { Logger } from 'pino'
import { timeoutSignal, type Clock } from '../../actors/clock.js'
import type { PeerIdStr } from './dial-keeper.js'

/** `network.dht` (specs/config.md). */
export interface DhtInit {
  /**
   * `server` answers DHT queries (a node on a reachable address), `client` only asks (a node
   * behind NAT), `auto` lets libp2p decide from its reachability (AutoNAT). @default 'auto'
   */
  mode?: 'server' | 'client' | 'auto'
  /** Peers per k-bucket. @default 20 */
  kBucketSize?: number
  /** Routing table depth: at most 2^prefixLength × kBucketSize peers. @default 6 */
  prefixLength?: number
  /** Keep private (LAN) addresses in DHT answers (a devnet, a LAN). @default false */
  privateAddresses?: boolean
  /** How often the providers key is looked up, ms. @default 30000 */
  lookupIntervalMs?: number
  /** Providers dialled per lookup, at most. @default 8 */
  maxDialsPerLookup?: number
}

/** The DHT protocol of DMS networks (kept apart from the public IPFS DHT). */
export const DMS_DHT_PROTOCOL = '/dms/kad/1.0.0'

/** The kad-dht service for `init` (loaded only by a node whose config sets `network.dht`). */
export async function dhtService(init: DhtInit): Promise<ReturnType<typeof kadDHT>> {
  const { kadDHT, removePrivateAddressesMapper, passthroughMapper } = await import('@libp2p/kad-dht')
  return kadDHT({
    protocol: DMS_DHT_PROTOCOL,
    clientMode: init.mode === 'client',
    kBucketSize: init.kBucketSize ?? 20,
    prefixLength: init.prefixLength ?? 6,
    peerInfoMapper: init.privateAddresses === true ? passthroughMapper : removePrivateAddressesMapper,
  })
}

/** The DHT key providers announce themselves under. */
export async function providersKey(): Promise<CID> {
  return CID.createV1(raw.code, await sha256.digest(new TextEncoder().encode('dms/providers/v1')))
}

/** What the rendezvous needs from the host. */
export interface RendezvousHost {
  provide(key: CID, signal: AbortSignal): Promise<void>
  findProviders(key: CID, signal: AbortSignal): AsyncIterable<{ id: PeerIdStr; addrs: string[] }>
  connected(peer: PeerIdStr): boolean
  dial(peer: PeerIdStr, addrs: string[], signal: AbortSignal): Promise<void>
  self: PeerIdStr
}

/** A provider found through the DHT: dialled when not connected yet (the lookup may have connected it). */
export interface FoundEvent {
  peer: PeerIdStr
  /** Connected now. */
  ok: boolean
  /** The rendezvous dialled it (false: it was connected already). */
  dialled: boolean
  error?: string
}

/** Providers remembered as seen (for logging each once). */
const MAX_SEEN = 1024

/**
 * Announces this node as a provider (when it is one) and looks the providers key up every
 * `lookupIntervalMs`, dialling providers it is not connected to. Driven by the injected Clock.
 */
export class Rendezvous {
  private readonly ac = new AbortController()
  private timer?: unknown
  private readonly listeners = new Set<(e: FoundEvent) => void>()
  private readonly interval: number
  private readonly maxDials: number
  private round?: Promise<void>
  private readonly seen = new Set<PeerIdStr>()

  constructor(
    private readonly c: { host: RendezvousHost; clock: Clock; log?: Logger },
    private readonly init: { announce: boolean } & DhtInit,
  ) {
    this.interval = init.lookupIntervalMs ?? 30_000
    this.maxDials = init.maxDialsPerLookup ?? 8
  }

  /** Calls `fn` with each provider found and dialled; returns the unsubscribe function. */
  onFound(fn: (e: FoundEvent) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  start(): void {
    this.arm(1000)
  }

  async stop(): Promise<void> {
    this.ac.abort()
    if (this.timer !== undefined) this.c.clock.clearTimeout(this.timer)
    await this.round
  }

  /**
   * One announce + lookup round now (also what the timer runs). It ends by its deadline (the
   * interval, at least 5 s, on the injected clock) even if the DHT ignores the abort: a round that
   * hung would stop every later one, and the node would never find a provider again.
   */
  async lookup(): Promise<void> {
    const key = await providersKey()
    const signal = timeoutSignal(Math.max(5000, this.interval), {
      clock: this.c.clock,
      signal: this.ac.signal,
    })
    if (this.init.announce)
      await untilAborted(this.c.host.provide(key, signal), signal).catch((err: unknown) => {
        this.c.log?.debug({ err: (err as Error).message }, 'announcing as a provider on the DHT failed')
      })
    let dialled = 0
    const found = this.c.host.findProviders(key, signal)[Symbol.asyncIterator]()
    try {
      for (;;) {
        const next = await untilAborted(found.next(), signal)
        if (next.done === true) break
        const p = next.value
        if (p.id === this.c.host.self) continue
        if (this.c.host.connected(p.id)) {
          this.emit({ peer: p.id, ok: true, dialled: false })
          continue
        }
        if (dialled++ >= this.maxDials) continue
        await untilAborted(this.c.host.dial(p.id, p.addrs, signal), signal).then(
          () => this.emit({ peer: p.id, ok: true, dialled: true }),
          (err: unknown) =>
            this.emit({ peer: p.id, ok: false, dialled: true, error: (err as Error).message }),
        )
      }
    } catch (err) {
      void found.return?.().catch(() => {})
      if (!this.ac.signal.aborted)
        this.c.log?.debug({ err: (err as Error).message }, 'looking up providers on the DHT failed')
    }
  }

  private arm(ms: number): void {
    if (this.ac.signal.aborted) return
    this.timer = this.c.clock.setTimeout(() => {
      this.timer = undefined
      this.round = this.lookup().finally(() => this.arm(this.interval))
    }, ms)
  }

  private emit(e: FoundEvent): void {
    if (e.ok && !this.seen.has(e.peer)) {
      if (this.seen.size >= MAX_SEEN) this.seen.clear()
      this.seen.add(e.peer)
      this.c.log?.info({ peer: e.peer, dialled: e.dialled }, 'found a provider through the DHT')
    }
    for (const fn of [...this.listeners]) fn(e)
  }
}

/** `p`, or the signal's reason once it aborts, whichever comes first (`p` is left to settle alone). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => {})
    return Promise.reject(signal.reason as Error)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error)
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort)
        resolve(v)
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(err instanceof Error ? err : new Error(String(err)))
      },
    )
  })
}
