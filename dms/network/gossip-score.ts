import type { GossipsubOpts } from '@libp2p/gossipsub'
import { createTopicScoreParams } from '@libp2p/gossipsub/score'

/**
 * How rejected gossip lowers its sender's score. A peer's score on a scored topic is
 * `topicWeight × invalidMessageWeight × n²`, n = the messages of that topic it delivered that our
 * validator rejected, times `invalidMessageDecay` each second. Below each threshold the peer
 * loses something more: gossip (IHAVE/IWANT), then our publishes, then every RPC (graylisted:
 * dropped before any signature check). With the defaults, 2 rejected messages stop gossip with
 * the peer, 3 graylist it, and a peer graylisted after n rejections gets back above the graylist
 * threshold about ln(2.83 / n) / ln(0.9) seconds after it stops (≈ 36 s for n = 128).
 */
export interface GossipScoreSettings {
  /** @default 1 */
  topicWeight?: number
  /** Weight of the squared count of rejected messages (gossipsub's P4); ≤ 0. @default -10 */
  invalidMessageWeight?: number
  /** Fraction of that count kept after each second, in (0, 1). @default 0.9 */
  invalidMessageDecay?: number
  /** Below it, no gossip is exchanged with the peer. ≤ 0. @default -10 */
  gossipThreshold?: number
  /** Below it, we do not publish to the peer. ≤ gossipThreshold. @default -50 */
  publishThreshold?: number
  /** Below it, every RPC from the peer is dropped before any signature check. ≤ publishThreshold. @default -80 */
  graylistThreshold?: number
}

/** The score settings used when the config leaves them out (specs/protocol.md, "Gossip scoring"). */
export const GOSSIP_SCORE_DEFAULTS: Required<GossipScoreSettings> = {
  topicWeight: 1,
  invalidMessageWeight: -10,
  invalidMessageDecay: 0.9,
  gossipThreshold: -10,
  publishThreshold: -50,
  graylistThreshold: -80,
}

/**
 * Gossipsub's score parameters and thresholds for `topics` (each scored alike) with `settings`
 * over the defaults; `colocation` is the IP-colocation weight when one is set.
 */
export function scoreOptions(
  topics: string[],
  settings: GossipScoreSettings,
  colocation?: number,
): Pick<GossipsubOpts, 'scoreParams' | 'scoreThresholds'> {
  const score = { ...GOSSIP_SCORE_DEFAULTS, ...definedOnly(settings) }
  // Only rejections count (P4): time in mesh, first and mesh deliveries (P1-P3b) stay off, since
  // bid requests are rare and a quiet honest peer must not sink, nor a flooder buy credit first.
  const topicParams = createTopicScoreParams({
    topicWeight: score.topicWeight,
    timeInMeshWeight: 0,
    firstMessageDeliveriesWeight: 0,
    meshMessageDeliveriesWeight: 0,
    meshFailurePenaltyWeight: 0,
    invalidMessageDeliveriesWeight: score.invalidMessageWeight,
    invalidMessageDeliveriesDecay: score.invalidMessageDecay,
  })
  return {
    scoreParams: {
      topics: Object.fromEntries(topics.map((t) => [t, topicParams])),
      ...(colocation === undefined ? {} : { IPColocationFactorWeight: colocation }),
    },
    scoreThresholds: {
      gossipThreshold: score.gossipThreshold,
      publishThreshold: score.publishThreshold,
      graylistThreshold: score.graylistThreshold,
    },
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
