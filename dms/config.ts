/** A node's configuration. Spec: specs/config.md. */
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
  }
  /** Provider role: bid for jobs and run them in Docker. */
  provider?: {
    contractDb: string
    offer: Resources & { prices: Prices }
    docker?: { socketPath?: string }
    allowedImages?: string[]
    maxDurationSeconds?: number
    bidTtlMs?: number
  }
  /** Contract-db role: verify contracts, hold escrow, settle. */
  contractDb?: { approve?: string[]; fund?: Record<string, number> }
}
