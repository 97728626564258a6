/**
 * Which bids and declines a requester keeps for ranking: only those of approved providers (their
 * approval credential checks out against this requester's contract-db), for this job, signed, and
 * for exactly what was asked. Every other one is ignored and counted by reason
 * (`dms_requester_bids_ignored_total`). Spec: specs/protocol.md ("Checks on the receiving side").
 */
import type { Clock } from '../../actors/clock.js'
import type { Message } from '../../actors/system.js'
import { handleTooLarge } from '../protocol/bounds.js'
import { checkApproval, type ApprovalProblem } from '../contracts/approval.js'
import { ApprovalCache } from '../contracts/approval-cache.js'
import { bidSignatureOk } from '../contracts/checks.js'
import { bidAskedProblem, bidTotalProblem } from '../contracts/consistency.js'
import { ENGINE_NAME } from '../contracts/model.js'
import type { BidMessage, Decline } from '../protocol/messages.js'
import type { JobRecord, JobState } from './job-record.js'
import type { JobSpec } from './job-spec.js'
import { isTime, latestStartOf, startTooLate } from './start-window.js'

export type IgnoreReason =
  | ApprovalProblem
  | 'not_bidding'
  | 'wrong_job'
  | 'not_sender'
  | 'bad_handle'
  | 'bad_signature'
  | 'other_terms'
  | 'bad_total'
  | 'bad_engine'
  | 'over_price'
  | 'expired'
  | 'not_allowed'
  | 'excluded'
  | 'starts_too_late'
  | 'bad_start'

export interface AdmissionContext {
  jobId: string
  spec: JobSpec
  /** Providers dropped for a fault earlier in this job. */
  excluded: string[]
  /** The contract-db this requester trusts (peer id). */
  contractDb: string
  now: number
  /** The latest start the job accepts (start-window.ts); undefined: now. */
  latestStart?: number
}

/** A job as its machine has it now. */
export interface JobView {
  state: JobState
  record: JobRecord
}

/**
 * The facts a job's bids and declines are checked against, or undefined when the job is not in
 * `bidding` (its answers come too late, or it is not running here).
 */
export function admissionOf(
  job: JobView | undefined,
  contractDb: string,
  now: number,
): AdmissionContext | undefined {
  if (job === undefined || job.state !== 'bidding') return undefined
  const { record } = job
  const latestStart = latestStartOf(record)
  return {
    jobId: record.id,
    spec: record.spec,
    excluded: record.excluded ?? [],
    contractDb,
    now,
    ...(latestStart !== undefined ? { latestStart } : {}),
  }
}

/** How a provider's approval credential is checked: `checkApproval`, or an ApprovalCache's `check`. */
export type ApprovalCheck = (
  cred: Parameters<typeof checkApproval>[0],
  want: Parameters<typeof checkApproval>[1],
) => ApprovalProblem | undefined

/**
 * Why a bid cannot be ranked, or undefined when it can: the one place that decides it. Cheap
 * checks first, signatures last; `ctx` undefined means the job is not bidding.
 */
export function bidProblem(
  m: Message<BidMessage>,
  ctx: AdmissionContext | undefined,
  approvalCheck: ApprovalCheck = checkApproval,
): IgnoreReason | undefined {
  if (ctx === undefined) return 'not_bidding'
  const bid = m.payload.bid
  if (bid.jobId !== ctx.jobId) return 'wrong_job'
  if (bid.provider !== m.peer) return 'not_sender'
  // Its addresses are kept in the job record (to reach the provider after a restart).
  if (handleTooLarge(m.from)) return 'bad_handle'
  const { spec } = ctx
  // The job's provider constraints, and providers dropped for a fault.
  if (spec.providers.allow.length > 0 && !spec.providers.allow.includes(bid.provider)) return 'not_allowed'
  if (spec.providers.deny.includes(bid.provider)) return 'not_allowed'
  if (ctx.excluded.includes(bid.provider)) return 'excluded'
  // The bid is for what was asked, and its total is what the contract-db will lock.
  if (bidAskedProblem(bid, spec) !== undefined) return 'other_terms'
  if (bidTotalProblem(bid) !== undefined) return 'bad_total'
  if (bid.engine !== undefined && !ENGINE_NAME.test(bid.engine)) return 'bad_engine'
  if (bid.total > spec.maxPrice) return 'over_price'
  if (bid.expiresAt <= ctx.now) return 'expired'
  // A finite number past what a Date holds would throw where a time is written (a decline, a quote).
  if (!isTime(bid.earliestStart)) return 'bad_start'
  // Only a peer approved as a provider bids (a requester-only approval is refused here, as the
  // contract-db would refuse the contract).
  const approval = approvalCheck(m.payload.approval, {
    peer: m.peer,
    contractDb: ctx.contractDb,
    now: ctx.now,
    role: 'provider',
  })
  if (approval !== undefined) return approval
  if (!bidSignatureOk(bid)) return 'bad_signature'
  // Last: a valid bid that starts too late is answered as a decline (the job inbox keeps it).
  if (startTooLate(bid, ctx.latestStart, ctx.now) !== undefined) return 'starts_too_late'
  return undefined
}

/** Why a decline is not kept (not shown in the job's failure), or undefined when it is. */
export function declineProblem(
  m: Message<Decline>,
  ctx: AdmissionContext | undefined,
  approvalCheck: ApprovalCheck = checkApproval,
): IgnoreReason | undefined {
  if (ctx === undefined) return 'not_bidding'
  const d = m.payload
  if (d.jobId !== ctx.jobId) return 'wrong_job'
  if (d.provider !== m.peer) return 'not_sender'
  return approvalCheck(d.approval, {
    peer: m.peer,
    contractDb: ctx.contractDb,
    now: ctx.now,
    role: 'provider',
  })
}

/** Who hears of the bids and declines kept (`until`: when the sender's credential expires). */
export interface BidAdmissionListener {
  bid?: (peer: string, until: number) => void
  decline?: (peer: string, until: number) => void
}

/**
 * A requester's gate for every job's answers: keeps what passes `bidProblem` / `declineProblem`
 * and counts the rest by reason (`dms_requester_bids_ignored_total`,
 * `dms_requester_declines_ignored_total`).
 */
export class BidAdmission {
  /** Bids not ranked, by reason. */
  readonly bidsIgnored: Record<string, number> = {}
  /** Declines not kept, by reason. */
  readonly declinesIgnored: Record<string, number> = {}
  /**
   * A provider sends the same credential with every bid for minutes: its signature is verified
   * once; the sender, the contract-db and the expiry are checked on every bid.
   */
  private readonly approvals = new ApprovalCache()
  private readonly checkApproval: ApprovalCheck = (cred, want) => this.approvals.check(cred, want)

  constructor(
    private readonly c: { clock: Pick<Clock, 'now'> },
    /** The contract-db this requester trusts (peer id): approvals must be its. */
    private readonly contractDb: string,
    /**
     * Told the sender of each bid and decline kept, with its credential's expiry: that peer is an
     * approved provider (capacity news and joins from it may wake queued jobs, wakers.ts).
     */
    private readonly heard: BidAdmissionListener = {},
  ) {}

  /**
   * Why a bid for `job` (its state and record now; undefined when it is not running here) is not
   * kept for ranking (counted), or undefined when it is.
   */
  admitBid(m: Message<BidMessage>, job: JobView | undefined): IgnoreReason | undefined {
    const why = bidProblem(m, admissionOf(job, this.contractDb, this.c.clock.now()), this.checkApproval)
    if (why !== undefined) this.bidsIgnored[why] = (this.bidsIgnored[why] ?? 0) + 1
    else if (m.payload.approval !== undefined) this.heard.bid?.(m.peer, m.payload.approval.expiresAt)
    return why
  }

  /** Why the decline is not kept (counted), or undefined when it is. */
  admitDecline(m: Message<Decline>, job: JobView | undefined): IgnoreReason | undefined {
    const why = declineProblem(m, admissionOf(job, this.contractDb, this.c.clock.now()), this.checkApproval)
    if (why !== undefined) this.declinesIgnored[why] = (this.declinesIgnored[why] ?? 0) + 1
    else if (m.payload.approval !== undefined) this.heard.decline?.(m.peer, m.payload.approval.expiresAt)
    return why
  }
}
