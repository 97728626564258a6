/**
 * How an actor system moves bytes between nodes. `dms/network` implements it over libp2p; the actor
 * runtime knows nothing else about the network.
 */
export type PeerIdStr = string

export interface InboundFrame {
  bytes: Uint8Array
  /** The peer the bytes came from: the connection's remote peer, or a gossip message's signed origin. */
  from: PeerIdStr
  via: 'direct' | 'gossip'
  topic?: string
}

/**
 * What the receiver made of a frame. A gossip transport uses it as its validation result:
 * `reject` (invalid: not forwarded, the origin is penalised), `ignore` (valid but stale or already
 * seen: not forwarded), `accept` (forwarded to the mesh).
 */
export type FrameVerdict = 'accept' | 'ignore' | 'reject'

/** A frame the transport refused before the receiver saw it (e.g. a length prefix over the limit). */
export interface TransportRefusal {
  reason: 'oversized' | 'malformed'
  from: PeerIdStr
  via: 'direct' | 'gossip'
}

export interface FrameHandlers {
  frame(frame: InboundFrame): FrameVerdict
  /** Counted by the receiver like its own rejections. */
  refused(refusal: TransportRefusal): void
}

export interface Transport {
  readonly peerId: PeerIdStr
  /** Addresses other nodes can dial this node on. */
  addrs(): string[]
  /** Sends one frame to a peer on a long-lived direct stream, dialing `addrs` if not connected. */
  send(peer: PeerIdStr, addrs: string[], bytes: Uint8Array, options?: { signal?: AbortSignal }): Promise<void>
  /** Broadcasts one frame on a gossip topic. */
  publish(topic: string, bytes: Uint8Array): Promise<void>
  subscribe(topic: string): void
  /**
   * Peers subscribed to the topic that a publish can reach now (connected, with a usable stream):
   * a subscriber that has gone, or that the router no longer serves, is not listed.
   */
  topicSubscribers(topic: string): PeerIdStr[]
  /** `topicSubscribers(topic).length`. */
  topicPeers(topic: string): number
  /** Resolves once at least `n` peers are live subscribers of the topic (event-driven). */
  waitForTopicPeers(topic: string, n: number, options?: { signal?: AbortSignal }): Promise<void>
  /** Registers the single receiver of inbound frames. */
  onFrame(handlers: FrameHandlers): void
}
