import { ENVELOPE_VERSION } from './envelope.js'
import type { MailboxInit } from './mailbox.js'

/** The limits an actor system keeps (specs/protocol.md "Receive pipeline"). */
export interface ActorSystemInit {
  /** Largest accepted frame. @default 4 MiB */
  maxFrameBytes?: number
  /** Longest envelope lifetime accepted; bounds the replay cache. @default 300000 */
  maxTtlMs?: number
  /** How far in the future issued-at may be. @default 30000 */
  clockSkewMs?: number
  /** Lifetime given to outgoing envelopes. @default 60000 */
  defaultTtlMs?: number
  /** (sender, nonce) pairs remembered. @default 100000 */
  replayCacheSize?: number
  /** Closed inboxes remembered (for `late` accounting), each for maxTtlMs. @default 10000 */
  closedInboxMemory?: number
  /** Default mailbox of spawned actors. @default { capacity: 1024, overflow: 'drop-newest' } */
  mailbox?: MailboxInit
  /**
   * The protocol version this system speaks: sent in every envelope, and an envelope saying
   * another is refused (`bad_version`) before its signature or payload is looked at.
   * @default 1 (`ENVELOPE_VERSION`)
   */
  version?: number
  /** Peers whose other version was logged, remembered so that each is logged once. @default 1024 */
  versionPeerMemory?: number
}

export type SystemConfig = Required<Omit<ActorSystemInit, 'mailbox'>> & { mailbox: MailboxInit }

/** The limits with their defaults filled in. */
export function systemConfig(init: ActorSystemInit): SystemConfig {
  return {
    maxFrameBytes: init.maxFrameBytes ?? 4 * 1024 * 1024,
    maxTtlMs: init.maxTtlMs ?? 300_000,
    clockSkewMs: init.clockSkewMs ?? 30_000,
    defaultTtlMs: init.defaultTtlMs ?? 60_000,
    replayCacheSize: init.replayCacheSize ?? 100_000,
    closedInboxMemory: init.closedInboxMemory ?? 10_000,
    mailbox: init.mailbox ?? {},
    version: init.version ?? ENVELOPE_VERSION,
    versionPeerMemory: init.versionPeerMemory ?? 1024,
  }
}
