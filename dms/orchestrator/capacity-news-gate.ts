/**
 * The requester's gate on capacity news, run as the capacity topic's admission rule
 * (ActorSystem.admit) so that news is judged as gossipsub validates it, before it is delivered or
 * forwarded to other subscribers. News passes only when it is signed by the provider it names,
 * carries that provider's approval credential from this requester's contract-db with role
 * `provider`, and comes at most one per NEWS_MIN_GAP_MS from its origin (a provider announces at
 * most one a second). Anything else is rejected: not delivered, not forwarded, and the peer that
 * sent it is scored down by gossipsub (the topic is scored: graylisted after a few). Cheap checks
 * first (the credential's fields and role, the rate), the credential's signature last and
 * remembered (ApprovalCache). Spec: specs/protocol.md ("Capacity news").
 */
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { Message, TopicAdmission } from '../../actors/system.js'
import { checkApproval, type ApprovalProblem } from '../contracts/approval.js'
import { ApprovalCache } from '../contracts/approval-cache.js'
import { isMessageOf, W } from '../protocol/behaviours.js'
import type { CapacityNews } from '../protocol/messages.js'

/** News closer together than this from one origin is rejected (`rate_limited`). */
export const NEWS_MIN_GAP_MS = 500
/** Origins whose last news time is remembered (the least recently heard is forgotten past this). */
const PEERS_KEPT = 10_000

/** Why news is rejected (the label of the counter that counts it). */
export type NewsProblem = ApprovalProblem | 'not_news' | 'other_signer' | 'rate_limited'

export interface CapacityNewsGateDeps {
  clock: Pick<Clock, 'now'>
  log: Logger
  /** News rejected, by reason (shared with the listener's counts). */
  counts: Record<string, number>
}

export class CapacityNewsGate {
  private readonly lastFrom = new Map<string, number>()
  /** A provider's credential is the same on all its news for minutes: its signature is verified once. */
  private readonly approvals: ApprovalCache

  /**
   * @param contractDb the contract-db this requester trusts (peer id)
   * @param checker the full credential check (tests count its signature verifications). @default checkApproval
   */
  constructor(
    private readonly d: CapacityNewsGateDeps,
    private readonly contractDb: string,
    checker: typeof checkApproval = checkApproval,
  ) {
    this.approvals = new ApprovalCache(undefined, checker)
  }

  /** The capacity topic's admission rule: only good capacity news travels on it. */
  readonly admission: TopicAdmission = (msg) => {
    const why = isMessageOf(msg, W.capacityNews) ? this.judge(msg) : 'not_news'
    if (why === undefined) return 'accept'
    this.d.counts[why] = (this.d.counts[why] ?? 0) + 1
    this.d.log.debug({ from: msg.peer, why }, 'capacity news rejected')
    return 'reject'
  }

  /** Why `msg` may not travel, or undefined when it may (its origin's rate is then taken). */
  judge(msg: Message<CapacityNews>): NewsProblem | undefined {
    const news = msg.payload
    if (news.provider !== msg.peer) return 'other_signer'
    // Only a peer approved as a provider announces capacity.
    const want = {
      peer: msg.peer,
      contractDb: this.contractDb,
      now: this.d.clock.now(),
      role: 'provider' as const,
    }
    // The credential's fields and role before anything costs a signature check.
    const fields = checkApproval(news.approval, want, { signatureChecked: true })
    if (fields !== undefined) return fields
    if (want.now - (this.lastFrom.get(msg.peer) ?? -Infinity) < NEWS_MIN_GAP_MS) return 'rate_limited'
    const signed = this.approvals.check(news.approval, want)
    if (signed !== undefined) return signed
    this.lastFrom.delete(msg.peer)
    this.lastFrom.set(msg.peer, want.now)
    if (this.lastFrom.size > PEERS_KEPT) this.lastFrom.delete(this.lastFrom.keys().next().value as string)
    return undefined
  }
}
