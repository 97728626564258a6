import type { Connection, PeerId, Stream } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import type { Logger } from 'pino'
import type { InboundFrame, PeerIdStr, Transport } from '../../actors/transport.js'
import type { Host } from './host.js'

/** The direct actor protocol: one long-lived stream per peer carrying length-prefixed envelopes. */
export const ACTOR_PROTOCOL = '/dms/actor/1.0.0'

export interface Libp2pTransportInit {
  /** Frames larger than this are refused by the reader (the stream is closed). @default 4 MiB */
  maxFrameBytes?: number
}

/** The actor runtime's Transport over libp2p: direct streams for messages, gossipsub for broadcasts. */
export class Libp2pTransport implements Transport {
  private handler: (f: InboundFrame) => void = () => {}
  private readonly outbound = new Map<PeerIdStr, Promise<Stream>>()
  private readonly maxFrameBytes: number
  private started = false

  constructor(
    private readonly components: { host: Host; log: Logger },
    init: Libp2pTransportInit = {},
  ) {
    this.maxFrameBytes = init.maxFrameBytes ?? 4 * 1024 * 1024
  }

  get peerId(): PeerIdStr {
    return this.components.host.peerId.toString()
  }

  addrs(): string[] {
    return this.components.host.getMultiaddrs().map((a) => a.toString())
  }

  onFrame(handler: (f: InboundFrame) => void): void {
    this.handler = handler
  }

  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    const { host } = this.components
    await host.handle(ACTOR_PROTOCOL, (stream, connection) => this.readLoop(stream, connection), {
      maxInboundStreams: 4,
      runOnLimitedConnection: false,
    })
    host.services.pubsub.addEventListener('message', (evt) => {
      const msg = evt.detail
      if (msg.type !== 'signed') return
      this.deliver({ bytes: msg.data, from: msg.from.toString(), via: 'gossip', topic: msg.topic })
    })
  }

  async stop(): Promise<void> {
    if (!this.started) return
    this.started = false
    await this.components.host.unhandle(ACTOR_PROTOCOL)
    this.outbound.clear()
  }

  subscribe(topic: string): void {
    this.components.host.services.pubsub.subscribe(topic)
  }

  topicPeers(topic: string): number {
    return this.components.host.services.pubsub.getSubscribers(topic).length
  }

  waitForTopicPeers(topic: string, n: number, options: { signal?: AbortSignal } = {}): Promise<void> {
    const pubsub = this.components.host.services.pubsub
    return new Promise((resolve, reject) => {
      const done = (err?: unknown) => {
        pubsub.removeEventListener('subscription-change', check)
        options.signal?.removeEventListener('abort', onAbort)
        if (err === undefined) resolve()
        else reject(err instanceof Error ? err : new Error('aborted', { cause: err }))
      }
      const check = () => {
        if (pubsub.getSubscribers(topic).length >= n) done()
      }
      const onAbort = () => done(options.signal?.reason ?? new Error('aborted'))
      if (options.signal?.aborted) return onAbort()
      pubsub.addEventListener('subscription-change', check)
      options.signal?.addEventListener('abort', onAbort, { once: true })
      check()
    })
  }

  async publish(topic: string, bytes: Uint8Array): Promise<void> {
    await this.components.host.services.pubsub.publish(topic, bytes)
  }

  async send(
    peer: PeerIdStr,
    addrs: string[],
    bytes: Uint8Array,
    options: { signal?: AbortSignal } = {},
  ): Promise<void> {
    // One retry: a cached stream may have died since its last use (peer restarted, connection dropped).
    for (let attempt = 0; ; attempt++) {
      const stream = await this.streamTo(peer, addrs, options.signal)
      try {
        if (stream.status !== 'open' || stream.writeStatus !== 'writable')
          throw new Error('stream not writable')
        if (!stream.send(lp.encode.single(bytes))) await stream.onDrain({ signal: options.signal })
        return
      } catch (err) {
        this.outbound.delete(peer)
        stream.abort(err as Error)
        if (attempt >= 1) throw err
      }
    }
  }

  private streamTo(peer: PeerIdStr, addrs: string[], signal?: AbortSignal): Promise<Stream> {
    let s = this.outbound.get(peer)
    if (s === undefined) {
      s = this.open(peer, addrs, signal)
      this.outbound.set(peer, s)
      s.catch(() => this.outbound.delete(peer))
    }
    return s
  }

  private async open(peer: PeerIdStr, addrs: string[], signal?: AbortSignal): Promise<Stream> {
    const { host } = this.components
    const id: PeerId = peerIdFromString(peer)
    if (host.getConnections(id).length === 0 && addrs.length > 0) {
      await host.peerStore.merge(id, { multiaddrs: addrs.map((a) => multiaddr(a)) })
    }
    const stream = await host.dialProtocol(id, ACTOR_PROTOCOL, { signal })
    stream.addEventListener('close', () => {
      if (this.outbound.get(peer) !== undefined)
        void this.outbound.get(peer)?.then((s) => s === stream && this.outbound.delete(peer))
    })
    // The remote never writes on our outbound stream; drain it so a close is noticed.
    void (async () => {
      try {
        for await (const _ of stream) void _
      } catch {
        /* closed */
      }
    })()
    return stream
  }

  private async readLoop(stream: Stream, connection: Connection): Promise<void> {
    const from = connection.remotePeer.toString()
    try {
      for await (const frame of lp.decode(stream, { maxDataLength: this.maxFrameBytes })) {
        this.deliver({ bytes: frame.subarray(), from, via: 'direct' })
      }
    } catch (err) {
      // Oversized or garbled length prefix: drop this stream; the peer may open a new one.
      this.components.log.debug({ err, from }, 'actor stream closed with error')
      stream.abort(err as Error)
    }
  }

  private deliver(frame: InboundFrame): void {
    try {
      this.handler(frame)
    } catch (err) {
      this.components.log.warn({ err }, 'frame handler threw')
    }
  }
}
