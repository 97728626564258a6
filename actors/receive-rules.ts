/**
 * The vocabulary of the receive pipeline (actors/system.ts): why a frame is refused or late, which
 * refusals a gossip router must not hold against the origin, and a topic's admission rule.
 * Spec: specs/protocol.md ("Receive pipeline").
 */
import type { Message } from './actor.js'

/** Why an inbound frame was refused. Each is counted in `rejections`. Spec: specs/protocol.md. */
export type RejectReason =
  | 'oversized'
  | 'malformed'
  | 'timeout'
  | 'over_budget'
  | 'unfinished'
  | 'truncated'
  | 'bad_payload'
  | 'bad_version'
  | 'bad_signature'
  | 'wrong_peer'
  | 'bad_reply_to'
  | 'expired'
  | 'future'
  | 'ttl_too_long'
  | 'replayed'
  | 'misaddressed'
  | 'no_inbox'
  | 'no_behaviour'
  | 'unexpected_reply'
  | 'mailbox_full'
  | 'not_admitted'
  | 'throttled'

/**
 * Valid messages that came after their addressee was gone: a job update after the job ended, a
 * reply after its request timed out. Not attacks, so not rejections; counted in `late`.
 */
export type LateReason = 'inbox_closed' | 'reply_after_timeout'

/** Rejections a gossip router should not forward or hold against the origin (stale, not invalid). */
export const IGNORED: ReadonlySet<RejectReason> = new Set(['expired', 'replayed', 'throttled'])

/**
 * A topic's admission rule (`ActorSystem.admit`), run on each gossip message of the topic once its
 * envelope and payload are valid, before it is delivered or forwarded: `accept`; `reject` (not
 * admitted: not delivered, not forwarded, its origin penalised by the gossip router); `ignore`
 * (throttled: not delivered, not forwarded, no penalty). It runs on every message, so it must be
 * cheap and synchronous.
 */
export type TopicAdmission = (msg: Message) => 'accept' | 'reject' | 'ignore'
