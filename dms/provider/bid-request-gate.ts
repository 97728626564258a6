/**
 * The provider's gate on bid requests, run where they arrive: for gossip, as the bid-request
 * topic's admission rule (ActorSystem.admit), so that a request is judged before gossipsub
 * forwards it; for a request sent directly, by the handler. Two checks, both cheap: the
 * requester's approval credential, which must grant the `requester` role (signatures remembered,
 * ApprovalCache), and a token bucket per requester peer. A request without a good credential is rejected: not delivered, not forwarded,
 * and its origin's gossip score drops (graylisted after a few). One over the rate is ignored: not
 * delivered, not forwarded, no penalty (an approved requester may burst).
 * Spec: specs/protocol.md ("Checks on the receiving side").
 */
import type { ProviderEvents } from './provider-events.js'
import type { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { Message, TopicAdmission } from '../../actors/system.js'
import { ApprovalCache } from '../contracts/approval-cache.js'
import { isMessageOf, W } from '../protocol/behaviours.js'
import type { BidRequest } from '../protocol/messages.js'
import { PeerRateLimiter, type PeerRateLimitInit } from './rate-limit.js'

export interface BidRequestGateDeps {
  clock: Clock
  log: Logger
  /** Hears `bid-request-ignored` (reason) for each request dropped without an answer. */
  events: Pick<EventEmitter<ProviderEvents>, 'emit'>
  /** Requests dropped by reason (`BidRequestCounters.ignored`). */
  ignored: Record<string, number>
}

export class BidRequestGate {
  private readonly rate: PeerRateLimiter
  private readonly approvals = new ApprovalCache()

  constructor(
    private readonly d: BidRequestGateDeps,
    private readonly init: { contractDb: string; bidRequestRate?: PeerRateLimitInit },
  ) {
    this.rate = new PeerRateLimiter(d.clock, init.bidRequestRate)
  }

  /** The bid-request topic's admission rule: only bid requests travel on it. */
  readonly admission: TopicAdmission = (msg) => {
    if (!isMessageOf(msg, W.bidRequest)) return 'reject'
    const verdict = this.judge(msg)
    return verdict === undefined ? 'accept' : verdict.reason === 'rate_limited' ? 'ignore' : 'reject'
  }

  /**
   * Why `msg` is dropped (counted and reported as ignored), or undefined when it may go on. The
   * credential first, so that an unapproved peer's requests never take tokens.
   */
  judge(msg: Message<BidRequest>): { reason: string } | undefined {
    const problem = this.approvals.check(msg.payload?.approval, {
      peer: msg.peer,
      contractDb: this.init.contractDb,
      now: this.d.clock.now(),
      // Only a requester may hold a reservation here (an approved provider asking: approval_role).
      role: 'requester',
    })
    if (problem !== undefined) return this.ignore(problem, msg)
    if (!this.rate.take(msg.peer)) return this.ignore('rate_limited', msg)
    return undefined
  }

  private ignore(reason: string, msg: Message): { reason: string } {
    this.d.ignored[reason] = (this.d.ignored[reason] ?? 0) + 1
    this.d.log.debug({ reason, from: msg.peer, via: msg.via }, 'bid request ignored')
    this.d.events.emit('bid-request-ignored', reason)
    return { reason }
  }
}
