/**
 * The payloads of the DMS protocol, one type per message. Spec: specs/protocol.md. They travel as
 * protobuf messages (proto/dms.proto, codecs.ts) inside signed protobuf envelopes
 * (proto/envelope.proto); behaviours.ts names which payload each behaviour carries.
 */
import type {
  ApprovalCredential,
  Bid,
  FundsProof,
  ContractProof,
  SignedContract,
  SignedReceipt,
  SignedStartNote,
  SignedVerification,
  TerminationReason,
} from '../contracts/model.js'
import type { InputFile } from './blob-payloads.js'
import type { Resources } from '../resources/types.js'
import type { WorkloadNeeds } from '../workload/needs.js'
import type { Workload } from '../workload/workload.js'

export interface BidRequest {
  jobId: string
  /**
   * What the job needs, whole: every member's name, artifact, network policy and resources
   * (dms/workload/needs.ts), not its command, env or working directory. The request is gossiped to
   * every provider before any contract, and those often hold secrets: they reach only the winner,
   * in the invocation (specs/protocol.md, "Bid request: the workload's needs").
   */
  workloadNeeds: WorkloadNeeds
  maxDurationSeconds: number
  /** Highest acceptable total for the whole max duration. */
  maxPrice: number
  /** Bids arriving after this are ignored. */
  deadline: number
  /** Peers that must not bid (e.g. after a provider fault). */
  exclude: string[]
  /** The requester's approval credential: providers reserve and bid only for approved requesters. */
  approval?: ApprovalCredential
  /**
   * The requester's funds proof from the contract-db: a provider reserves nothing for a job whose
   * max price it does not cover (specs/contract-db.md, "Funds proofs").
   */
  funds?: FundsProof
  /** A quote (`POST /v1/quotes`): the provider answers as for a job but reserves nothing. Absent: a job. */
  quote?: boolean
}

/**
 * `/dms/job/bid`: the signed bid and, next to it (so the contract terms do not change), the
 * provider's approval credential. A requester ranks only bids whose credential checks out.
 */
export interface BidMessage {
  bid: Bid
  approval?: ApprovalCredential
}

export interface Decline {
  jobId: string
  provider: string
  reasons: string[]
  /** The provider's approval credential: declines of unapproved peers are not kept. */
  approval?: ApprovalCredential
}

/**
 * A decline whose every reason starts with this says "not now": the provider holds as much as it
 * lets one requester hold in bids not yet invoked, which clears as that requester's other bids are
 * invoked or released. The requester asks again (specs/protocol.md, "Bid window").
 */
export const REQUESTER_CAP_REASON = 'requester cap:'

/** true when a decline only says "not now" (`REQUESTER_CAP_REASON`). */
export const declinedForNow = (d: Decline): boolean =>
  d.reasons.length > 0 && d.reasons.every((r) => r.startsWith(REQUESTER_CAP_REASON))

/** `/dms/approval/get`: no fields; the contract-db answers for the envelope's sender peer. */
export type ApprovalRequest = Record<string, never>

/** `/dms/account/balance`: no fields; the contract-db answers for the envelope's sender peer. */
export type BalanceRequest = Record<string, never>
/** `/dms/account/funds`: no fields; the contract-db answers for the envelope's sender peer. */
export type FundsRequest = Record<string, never>

/** The sender's account at the contract-db, in micro-tokens. */
export interface BalanceReply {
  balance: number
  escrow: number
}

export interface JobRequest {
  jobId: string
  bidId: string
}
export interface JobRequestReply {
  locked: true
  lockedUntil: number
}

export interface ContractSignRequest {
  contract: SignedContract
}
export interface ContractSignReply {
  providerSignature: string
}

export interface ContractVerifyRequest {
  contract: SignedContract
}

/**
 * `/dms/job/invoke`: run the contract. What runs is the workload, whole (dms/workload/): the
 * provider checks it against the bid request it bid on and the contract's terms before anything
 * runs (specs/protocol.md, "Invocation").
 */
export interface Invocation {
  contract: SignedContract
  proof: ContractProof
  /** Staged read-only at /inputs; the provider fetches the blobs it lacks from the requester. */
  inputs: InputFile[]
  workload: Workload
}

export interface InvocationReply {
  allocationId: string
}

export interface JobUpdate {
  jobId: string
  allocationId: string
  state: string
  at: number
  detail?: string
  /** On heartbeats: what the run used so far (specs/protocol.md, "Live usage"). */
  usage?: LiveUsage
}

/** A running allocation's usage so far, sampled by the provider's executor. */
export interface LiveUsage {
  cpuSeconds: number
  /** The highest memory use sampled so far. */
  memoryBytes: number
  /** stdout and stderr bytes produced so far. */
  logBytes: number
  wallSeconds: number
}

/**
 * `detail` of the periodic liveness update (a JobUpdate) a live allocation sends its requester:
 * the requester counts it as a sign of life and does not keep it.
 */
export const HEARTBEAT = 'heartbeat'

export interface JobResult {
  jobId: string
  receipt: SignedReceipt
  stdout: string
  stderr: string
  truncated: boolean
  /** The outputs' manifest; `hashOutputs(outputs)` is the receipt's outputsHash. */
  outputs: OutputEntry[]
  /** The tar of the outputs (a blob the requester fetches from the provider); absent when none. */
  archive?: OutputArchive
  /**
   * A pod: how each member ended, in the spec's order (then `stdout` and `stderr` are empty and
   * the outputs hold each member's files under `<member>/`).
   */
  members?: MemberOutcome[]
}

/** One pod member's end: as the executor's MemberResult, without its usage. */
export interface MemberOutcome {
  name: string
  status: 'completed' | 'failed' | 'timed_out' | 'cancelled'
  exitCode: number
  reason?: string
  stdout: string
  stderr: string
  truncated: boolean
}

/** One output file as listed in a result (its content is in the archive). */
export interface OutputEntry {
  path: string
  sha256: string
  size: number
}
export interface OutputArchive {
  sha256: string
  size: number
}

/** `/dms/job/log`: live output of an allocation, in order. */
export interface JobLog {
  jobId: string
  allocationId: string
  stream: 'stdout' | 'stderr'
  /** 0, 1, 2… per allocation: the requester drops repeats and notices gaps. */
  seq: number
  data: string
  /** A pod member's output names the member (absent for a single container). */
  member?: string
}

export interface SettleRequest {
  contractId: string
  receipt: SignedReceipt
  /** The requester's signed verdict after checking the outputs against the receipt. */
  verification: SignedVerification
}

/**
 * `/dms/contract/terminate`: a party closes an active contract without a normal settlement.
 * Reply: the signed `Settlement` with `outcome: 'terminated'`. Spec: specs/contract-db.md.
 */
export interface TerminateRequest {
  contractId: string
  reason: TerminationReason
  /** For a person: what happened. */
  detail?: string
  /** REQUESTER_CANCELLED: the provider's receipt, if one came, to bill its usage. */
  receipt?: SignedReceipt
}

/**
 * `/dms/blob/release`, a grantee -> the blob's node (its `blobs` inbox): it no longer needs the
 * blob (a workflow task's output archive once the workflow ended). Its grant is revoked, and the
 * blob deleted when no other peer holds a grant on it.
 */
export interface BlobRelease {
  sha256: string
  /** The job the archive was published for (the same bytes may be another job's outputs too). */
  jobId: string
}
export interface BlobReleaseReply {
  /** true when the blob was deleted from the store. */
  removed: boolean
}

/**
 * `/dms/job/cancel`, requester -> provider inbox: stop the allocation of this contract. The
 * allocation's result (a receipt with status `cancelled` and the usage) follows as `/dms/job/result`.
 */
export interface JobCancel {
  jobId: string
  contractId: string
}
export interface JobCancelReply {
  /** false when no allocation of this contract is running here (not started, or already ended). */
  stopping: boolean
}

/**
 * `/dms/job/result-again`, the contract's requester -> provider inbox: the result of this
 * contract's run once more (same fields and codec as JobCancel). Reply: the JobResult, as first
 * sent; refused NO_RESULT when none is kept, NOT_YOUR_JOB to anyone else.
 */
export interface ResultRequest {
  jobId: string
  contractId: string
}

/**
 * `/dms/job/bid-release`: the requester locked another provider's bid for this job. The loser
 * frees the resources it reserved for the bid at once instead of at the bid's expiry. Best effort.
 */
export interface BidRelease {
  jobId: string
  bidId: string
}

/**
 * `/dms/capacity/news` (gossip on CAPACITY_TOPIC): what a provider has free now, announced after
 * something was freed (a run ended, a bid was released or expired), at most once a second.
 * Requesters wake their queued jobs that could fit (specs/protocol.md, "Capacity news").
 */
export interface CapacityNews {
  provider: string
  free: Resources
  at: number
  /** The provider's approval credential: news from unapproved providers is ignored. */
  approval?: ApprovalCredential
}

/** `/dms/contract/started`: the provider's signed start note (specs/contract-db.md, "Start notes"). */
export interface StartNoteRequest {
  note: SignedStartNote
}
