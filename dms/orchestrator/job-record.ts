import type { ContractProof, Settlement, SignedContract } from '../contracts/model.js'
import type { Bid, Decline, JobResult, JobUpdate } from '../messages.js'
import type { JobSpec } from './job-spec.js'

export type JobId = string

export type JobState =
  | 'bidding'
  | 'selecting'
  | 'requesting'
  | 'contracting'
  | 'invoking'
  | 'running'
  | 'verifying'
  | 'settling'
  | 'completed'
  | 'failed'
  | 'cancelled'

export interface JobError {
  /** Stable reason code, e.g. NO_BIDS, CONTRACT_REFUSED, OUTPUT_HASH_MISMATCH. */
  code: string
  message: string
  /** Provider decline reasons, when no provider bid. */
  declines?: Decline[]
}

/** Everything the requester knows about one job: the job machine's context, persisted. */
export interface JobRecord {
  id: JobId
  spec: JobSpec
  createdAt: number
  history: Array<{ state: JobState; at: number }>
  bids: Bid[]
  declines: Decline[]
  /** Bids already tried (declined their job request). */
  tried: string[]
  winner?: { bidId: string; provider: string; why: string }
  contract?: SignedContract
  proof?: ContractProof
  allocationId?: string
  updates: JobUpdate[]
  result?: JobResult
  verification?: { outputsHashOk: boolean; receiptSignatureOk: boolean; outputsProblem?: string }
  settlement?: Settlement
  error?: JobError
}
