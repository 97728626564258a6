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

/**
 * Why the transport refused or lost a frame before the receiver saw it: a length prefix over the
 * limit (`oversized`) or broken (`malformed`), a frame not complete within the read deadline
 * (`timeout`) or over the buffered-bytes budget (`over_budget`), a stream that ended inside a
 * length prefix (`unfinished`) or inside a frame body (`truncated`).
 */
export type TransportRefusalReason =
  'oversized' | 'malformed' | 'timeout' | 'over_budget' | 'unfinished' | 'truncated'

/** A frame the transport refused before the receiver saw it. */
export interface TransportRefusal {
  reason: TransportRefusalReason
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
  /**
   * Calls `fn(peer)` each time a peer becomes a live subscriber of `topic` (it subscribed, or its
   * connection came back). Returns the unsubscribe. Optional: a transport without it never calls.
   */
  onTopicJoin?(topic: string, fn: (peer: PeerIdStr) => void): () => void
  /**
   * Closes every connection to `peer` because it went silent, so the next `send` dials it afresh,
   * trying the addresses of those connections last (a peer served by several processes under one
   * identity, such as the contract-db's instances, is reached through another one). Optional: a
   * transport without it keeps its connections.
   */
  disconnect?(peer: PeerIdStr): Promise<void>
  /** Leaves a gossip topic (no more frames from it). Optional, like `onTopicJoin`. */
  unsubscribe?(topic: string): void
  /** Registers the single receiver of inbound frames. */
  onFrame(handlers: FrameHandlers): void
}
