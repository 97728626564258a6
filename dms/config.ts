/**
 * A node's configuration. Spec: specs/config.md. The contract-db is not a role of this node: it
 * runs as its own process (`dms contract-db run`, dms/contracts/contract-db-node.ts).
 */
import type { MailboxInit } from '../actors/mailbox.js'
import type { NetworkInit } from './network/host.js'
import type { Prices, Resources } from './resources/types.js'

/** `network`: discovery, connection limits, gossipsub and actor limits. Spec: specs/config.md. */
export interface NetworkConfig extends NetworkInit {
  /** Largest frame (envelope) accepted, on streams and gossip. @default 4194304 */
  maxFrameBytes?: number
  /** Default mailbox of each actor. @default { capacity: 1024, overflow: 'drop-newest' } */
  mailbox?: MailboxInit
}

export interface NodeConfig {
  /** Where the key, database and socket live. */
  dataDir: string
  /** @default ['/ip4/127.0.0.1/tcp/0'] */
  listen?: string[]
  /** Peers to dial at start (multiaddrs ending in /p2p/<id>). @default [] */
  bootstrap?: string[]
  /** One-host network settings (tests, devnet). @default false */
  oneHost?: boolean
  /** Discovery, connection limits, gossipsub overrides, frame and mailbox limits. @default {} */
  network?: NetworkConfig
  /** REST API on a unix socket; false disables it. @default { socket: '<dataDir>/dms.sock' } */
  api?: { socket?: string } | false
  /** Requester role: post jobs and drive them to settlement. */
  requester?: {
    contractDb: { peer: string; addrs: string[] }
    bidWindowMs?: number
    enoughBids?: number
    /** Grace after the max duration before a silent provider is given up. @default 30000 */
    resultGraceMs?: number
    /** Per-request timeout (lock, contract, invocation, settlement). @default 10000 */
    requestTimeoutMs?: number
    /** Attempts at settling/terminating while the contract-db is unreachable. @default 4 */
    settleAttempts?: number
    /** Bid requests published (with backoff) while some providers stay silent. @default 3 */
    publishAttempts?: number
    /** A running job's provider silent this long is dropped (provider fault). @default 6000 */
    livenessTimeoutMs?: number
  }
  /** Provider role: bid for jobs and run them in Docker. */
  provider?: {
    contractDb: string
    /**
     * Initial offer, applied only when nothing is onboarded yet (no offer in the database). Once
     * onboarded, `dms onboard` / `dms offboard` change the stored offer and this is ignored.
     */
    offer?: Resources & { prices: Prices }
    /** Docker engine and executor settings (specs/executor.md). */
    docker?: { socketPath?: string; pullImages?: boolean; diskQuota?: boolean }
    allowedImages?: string[]
    /** Largest total of a job's output files (archived and fetched by the requester). @default 268435456 (256 MiB) */
    maxOutputBytes?: number
    maxDurationSeconds?: number
    bidTtlMs?: number
    /** Accept policy (specs/job-spec.md, "Provider policy"): lowest total worked for. */
    minPrice?: number
    /** Requesters served (empty: any) and never served. */
    allowRequesters?: string[]
    denyRequesters?: string[]
    /** Most jobs locked or running at once. @default unlimited */
    maxConcurrentJobs?: number
    /** How often a running allocation tells its requester it is alive. @default 2000 */
    heartbeatMs?: number
  }
}
