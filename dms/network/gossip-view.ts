import type { PeerId } from '@libp2p/interface'
import type { Host } from './host.js'

/**
 * The parts of gossipsub's state that its public API does not show, read (and in one case
 * repaired) in this one place so an upgrade of @libp2p/gossipsub is checked here only. Every
 * access is feature-detected: when a field is missing, the view falls back to the public API.
 */
interface GossipInternals {
  /** Peers gossipsub currently routes to (`getPeers()` lists them). */
  peers?: Map<string, PeerId>
  /** Our open outbound gossip stream per peer: a message for a peer without one is lost. */
  streamsOutbound?: Map<string, unknown>
  /** topic -> subscribed peers, as announced by them. */
  topics?: Map<string, Set<string>>
  /** Bytes of topic names charged to each peer (the per-peer subscription budget). */
  peerTopicBytes?: Map<string, number>
  /** Peers let through the graylist check without scoring (up to 128 RPCs within 1 s). */
  acceptFromWhitelist?: Map<string, unknown>
  /** The peer scores, each cached for a heartbeat. */
  score?: { scoreCache?: Map<string, unknown> }
  /** The peer's current score (public on the class, missing from the exported interface). */
  getScore?: (peer: string) => number
  /** The options it runs with. */
  opts?: { scoreThresholds?: { graylistThreshold?: number } }
}

/** Why a peer listed as a subscriber is not counted (debug logs). */
export type NotLive = 'not_routed' | 'no_connection' | 'no_outbound_stream'

/**
 * A read-only view of who can actually receive what we publish on a topic.
 *
 * Gossipsub 17.1 keeps a peer in `topics` after it is gone in one case (specs/protocol.md,
 * "Live subscribers"): it replaces an older inbound stream of a peer by closing it gracefully,
 * so that stream stays readable and its read loop goes on handling RPCs; when a junk frame on
 * the newer stream makes gossipsub drop the peer (`removePeer`), a subscription still read from
 * the older stream re-adds the peer to `topics` without it being in `peers`. `removePeer` at
 * disconnect returns early for a peer not in `peers`, so the entry stays until restart.
 */
export class GossipView {
  constructor(private readonly host: Host) {}

  private get internals(): GossipInternals {
    return this.host.services.pubsub as unknown as GossipInternals
  }

  /** Why `peer` cannot receive a publish now, or undefined when it can. */
  notLive(peer: PeerId): NotLive | undefined {
    const id = peer.toString()
    const g = this.internals
    if (g.peers !== undefined && !g.peers.has(id)) return 'not_routed'
    if (this.host.getConnections(peer).length === 0) return 'no_connection'
    if (g.streamsOutbound !== undefined && !g.streamsOutbound.has(id)) return 'no_outbound_stream'
    return undefined
  }

  /** Every topic a connected peer is subscribed to, with how many live subscribers it has. */
  knownTopics(): Array<{ topic: string; peers: number }> {
    const topics = this.internals.topics
    if (topics === undefined) return []
    return [...topics.keys()].sort().map((topic) => ({ topic, peers: this.liveSubscribers(topic).length }))
  }

  /** Subscribers of `topic` that gossipsub routes to, over a live connection and outbound stream. */
  liveSubscribers(topic: string): PeerId[] {
    return this.host.services.pubsub.getSubscribers(topic).filter((p) => this.notLive(p) === undefined)
  }

  /**
   * Removes `peer` from gossipsub's topic lists if gossipsub no longer routes to it (the stale
   * entry described above), refunding its subscription budget. Returns the topics it was removed
   * from. Does nothing for a peer gossipsub still knows: its own `removePeer` handles those.
   */
  forgetDeparted(peer: string): string[] {
    const g = this.internals
    if (g.peers === undefined || g.topics === undefined || g.peers.has(peer)) return []
    const removed: string[] = []
    for (const [topic, set] of g.topics) {
      if (!set.delete(peer)) continue
      removed.push(topic)
      if (set.size === 0) g.topics.delete(topic)
    }
    g.peerTopicBytes?.delete(peer)
    return removed
  }

  /** `peer`'s gossipsub score (0 for a peer it does not score), or undefined if not exposed. */
  scoreOf(peer: string): number | undefined {
    return this.internals.getScore?.call(this.host.services.pubsub, peer)
  }

  /** Whether gossipsub drops `peer`'s RPCs: its score is below the graylist threshold. */
  graylisted(peer: string): boolean {
    const threshold = this.internals.opts?.scoreThresholds?.graylistThreshold
    const score = this.scoreOf(peer)
    return threshold !== undefined && score !== undefined && score < threshold
  }

  /**
   * Makes gossipsub judge `peer` on its current score at its next RPC. Gossipsub caches a score
   * for a heartbeat (1 s) and lets a peer whose score was ≥ 0 through unscored for up to 128
   * RPCs within 1 s, assuming it cannot sink to the graylist threshold faster; with our weights
   * three rejected messages do (gossip-score.ts). Without this, a flood passes for about a second
   * before the graylist applies.
   */
  rescore(peer: string): void {
    const g = this.internals
    g.score?.scoreCache?.delete(peer)
    g.acceptFromWhitelist?.delete(peer)
  }
}
