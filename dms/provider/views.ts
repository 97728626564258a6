/**
 * The provider's bids as the rest of the node reads them: a bid record (what was offered to whom,
 * and where it stands) and, for an invoked bid, its allocation (what runs, its steps, its result),
 * both read from the stored bid machine (bid-store.ts). `GET /v1/allocations` and the metrics show
 * allocations in this shape.
 */
import type { Handle } from '../../actors/envelope.js'
import type { InputFile } from '../blobs/staging.js'
import type { Bid, SignedContract } from '../contracts/model.js'
import type { BidRequest } from '../protocol/messages.js'
import type { Workload } from '../workload/workload.js'
import {
  ALLOCATION_STATES,
  allocationState,
  bidRecordState,
  type HistoryEntry,
  type RunSummary,
} from './bid-context.js'
import type { StoredBid } from './bid-store.js'

/** A bid this provider made, with what it needs to honour it. */
export interface BidRecord {
  bid: Bid
  request: Omit<BidRequest, 'approval'>
  requester: Handle
  /** `released`: given up by its requester (`/dms/job/bid-release`) or cancelled before its run. */
  state: 'offered' | 'locked' | 'contracted' | 'invoked' | 'expired' | 'released'
  contractHash?: string
}

/** An allocation: an invoked bid, from its contract to the release of its resources. */
export interface AllocationRecord {
  allocationId: string
  jobId: string
  contract: SignedContract
  /** The ledger entry holding this allocation's resources (the bid id). */
  ledgerId: string
  requester: Handle
  /** What runs, as invoked. */
  workload: Workload
  inputs: InputFile[]
  /** The disk quota on /outputs (the job's disk, or the provider's default). */
  diskBytes: number
  /** contracted, provisioning, running, publishing, completed, failed, timed_out, cancelled, released */
  state: string
  /** Its steps from the contract on, each stamped with its time. */
  history: HistoryEntry[]
  result?: RunSummary
}

export function bidRecordOf(rec: StoredBid): BidRecord {
  const ctx = rec.snapshot.context
  return {
    bid: ctx.bid,
    request: ctx.request,
    requester: ctx.requester,
    state: bidRecordState(rec.state, ctx),
    ...(ctx.contractHash !== undefined ? { contractHash: ctx.contractHash } : {}),
  }
}

/** The allocation of an invoked bid; undefined for a bid never invoked. */
export function allocationOf(rec: StoredBid): AllocationRecord | undefined {
  const ctx = rec.snapshot.context
  const a = ctx.allocation
  if (a === undefined) return undefined
  const from = ctx.history.findIndex((h) => h.state === 'contracted')
  return {
    allocationId: a.allocationId,
    jobId: ctx.bid.jobId,
    contract: a.contract,
    ledgerId: ctx.bid.bidId,
    requester: ctx.requester,
    workload: a.workload,
    inputs: a.inputs,
    diskBytes: a.diskBytes,
    state: allocationState(rec.state),
    history: ctx.history
      .slice(Math.max(0, from))
      .filter((h) => h.state === 'contracted' || ALLOCATION_STATES.has(h.state)),
    ...(ctx.result !== undefined ? { result: ctx.result } : {}),
  }
}
