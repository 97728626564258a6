/** The provider's settings (`provider` in the node config, specs/config.md) and their defaults. */
import type { RetentionInit } from './bid-store.js'
import type { PriceTerms } from '../pricing/terms.js'
import type { Comparator } from './capability.js'
import type { ImageCheckInit } from './images.js'
import type { PeerRateLimitInit } from './rate-limit.js'
import type { RequesterCap } from './requester-cap.js'

export interface ProviderInit extends RetentionInit {
  /** Peer id of the contract-db whose proofs this provider accepts. */
  contractDb: string
  /**
   * Addresses of the contract-db (its instances under one identity: each its own);
   * empty: the addresses libp2p knows of it. @default []
   */
  contractDbAddrs?: readonly string[]
  /** How long a bid (and its reservation) stays valid. @default 30000 */
  bidTtlMs?: number
  /** How long a lock waits (from the lock) for its contract's invocation. @default 60000 */
  lockTtlMs?: number
  /**
   * How long a lock waits for its contract (`/dms/contract/sign`), which a requester sends right
   * after the lock: a lock without one is released then, so locks cannot be piled up for free.
   * @default 15000
   */
  contractWindowMs?: number
  /**
   * The budget of an allocation's provisioning, from its invocation: fetching and staging its
   * inputs, pulling its image, creating its container. Past it the allocation fails (its
   * receipt says so) and its resources are released. @default 300000
   */
  provisionTimeoutMs?: number
  /** How often expired reservations and overdue locks are released, and ended bids pruned. @default 5000 */
  sweepIntervalMs?: number
  /** The accept policy (specs/job-spec.md, "Provider policy"). */
  preferences?: Pick<
    Comparator,
    | 'allowedImages'
    | 'allowNetwork'
    | 'maxDurationSeconds'
    | 'minPrice'
    | 'allowRequesters'
    | 'denyRequesters'
    | 'maxConcurrentJobs'
  >
  /** How often a running allocation sends a heartbeat update. @default 2000 */
  heartbeatMs?: number
  /** What one requester may hold here in bids not yet invoked. */
  requesterCap?: RequesterCap
  /** Bid requests answered per peer: a token bucket. @default { perSecond: 100, burst: 200 } */
  bidRequestRate?: PeerRateLimitInit
  /** Registries used and the image look-up cache (`ImageCheck`). */
  images?: ImageCheckInit
  /**
   * The disk quota of a job that gives none, capped at the free disk of the offer (disk-grant.ts).
   * @default 268435456 (256 MiB)
   */
  defaultDiskBytes?: number
  /** A requester with more unpaid or claimed jobs here is declined (books.ts). @default no limit */
  maxUnpaidJobs?: number
  /** The price this provider bids (specs/pricing.md). @default per hour at the offer's prices */
  price?: PriceTerms
  /** Bid for a later start when a job does not fit now (later-bid.ts). @default false */
  laterBids?: boolean
  /** How far ahead such a start may be, in seconds (at most a day). @default 600 */
  maxStartAheadSeconds?: number
  /** How often contracts past their settleBy without a settlement are claimed. @default 60000 */
  claimSweepMs?: number
  /**
   * How long an output archive its requester did not release is kept after its contract's
   * settlement (kept-archives.ts). @default 86400000 (24 h)
   */
  outputsKeepMs?: number
  /** Bytes of output archives kept per requester; past it the oldest settled go first. @default 4 GiB */
  outputsBytesPerRequester?: number
}
