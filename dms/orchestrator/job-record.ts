import type { ContractProof, Settlement, SignedContract, Bid } from '../contracts/model.js'
import type { Decline, JobResult, JobUpdate } from '../protocol/messages.js'
import type { JobSpec } from './job-spec.js'

export type JobId = string

export type JobState =
  | 'scheduled'
  | 'queued'
  | 'bidding'
  | 'selecting'
  | 'requesting'
  | 'contracting'
  | 'invoking'
  | 'running'
  | 'verifying'
  | 'settling'
  | 'cancelling'
  | 'retrying'
  | 'completed'
  | 'failed'
  | 'cancelled'

export interface JobQueue {
  /** When the job fails QUEUE_TIMEOUT (ms since epoch): its start (`startAt`, else posting) + queueTimeout. */
  deadline: number
  /** Bid rounds that found no usable bid. */
  rounds: number
  /** The latest decline of each provider (and each refused job request) over those rounds. */
  declines: Decline[]
  /** What ended the last wait: `capacity <peer id>`, `joined <peer id>` or `backoff`. */
  wokenBy?: string
}

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
  /** The job this one reruns (`POST /v1/jobs/:id/rerun`): same spec, a new journey. */
  rerunOf?: JobId
  history: Array<{ state: JobState; at: number }>
  bids: Bid[]
  declines: Decline[]
  /** Bids already tried (their job request or contract was refused). */
  tried: string[]
  /**
   * Why each tried bid was given up: its job request refused (`lock`), or its contract refused
   * before the contract-db locked anything (`contract`). Cleared when the job bids again.
   */
  refusals?: Array<{
    step: 'lock' | 'contract'
    provider: string
    bidId: string
    code: string
    message: string
    at: number
  }>
  /** The requester's reliability record of each bidder when the bids were ranked (0..1). */
  reliability?: Record<string, number>
  winner?: { bidId: string; provider: string; why: string }
  /** Providers dropped for a fault (never asked again for this job), and each failed attempt. */
  excluded?: string[]
  attempts?: Array<{
    provider: string
    contractId?: string
    error: JobError
    settlement?: Settlement
    at: number
  }>
  /**
   * While the job waits for capacity (`queued`), and kept after: the absolute deadline, the bid
   * rounds that found no usable bid, the latest decline of each provider over those rounds, and
   * what woke the job last (`capacity <peer>`, `backoff`).
   */
  queue?: JobQueue
  /** When the next attempt of a job retried by its retry policy starts (backoff, on the clock). */
  retryAt?: number
  /** Set by `Orchestrator.cancel`: when the cancel was asked. */
  cancelRequestedAt?: number
  /** Live subscribers of the bid request topic (providers) when the last bid round closed. */
  providersConnected?: number
  /** The bidders' addresses (so a restarted requester can still reach its provider). */
  providerAddrs?: Record<string, string[]>
  /** When the job's provider was last heard from (an update or heartbeat) while running. */
  lastSeenAt?: number
  contract?: SignedContract
  proof?: ContractProof
  allocationId?: string
  updates: JobUpdate[]
  result?: JobResult
  verification?: {
    outputsHashOk: boolean
    receiptSignatureOk: boolean
    outputsProblem?: string
    /** false when the receipt claims more wall time than the run took (steps/verify.ts). */
    usageOk?: boolean
    usageProblem?: string
  }
  settlement?: Settlement
  error?: JobError
}
