/**
 * Behaviour names and payloads of the DMS protocol. Spec: specs/protocol.md.
 * Payloads travel as protobuf messages (proto/dms.proto, codecs in wire.ts) inside signed
 * protobuf envelopes (proto/envelope.proto).
 */
import type { ContractProof, SignedContract, SignedReceipt, Settlement } from './contracts/model.js'
import type { OutputFile } from './executor/executor.js'
import type { Resources } from './resources/types.js'

/** Gossip topic that carries bid requests. */
export const BID_REQUEST_TOPIC = '/dms/bid-requests/1'

export const B = {
  bidRequest: '/dms/job/bid-request',
  bid: '/dms/job/bid',
  decline: '/dms/job/decline',
  jobRequest: '/dms/job/request',
  contractSign: '/dms/contract/sign',
  contractVerify: '/dms/contract/verify',
  invoke: '/dms/job/invoke',
  update: '/dms/job/update',
  result: '/dms/job/result',
  settle: '/dms/contract/settle',
  settled: '/dms/contract/settled',
} as const

/** Inboxes of the well-known actors on every node. */
export const INBOX = { provider: 'provider', contractDb: 'contract-db' } as const
export const jobInbox = (jobId: string) => `job/${jobId}`
/** The provider-side child actor of one allocation. */
export const allocationInbox = (allocationId: string) => `alloc/${allocationId}`

export interface BidRequest {
  jobId: string
  resources: Resources
  image: string
  maxDurationSeconds: number
  /** Highest acceptable total for the whole max duration. */
  maxPrice: number
  /** Bids arriving after this are ignored. */
  deadline: number
  /** Peers that must not bid (e.g. after a provider fault). */
  exclude: string[]
}

export interface Bid {
  bidId: string
  jobId: string
  provider: string
  pricePerHour: number
  /** pricePerHour x max duration, at least the provider's minimum job price. */
  total: number
  earliestStart: number
  expectedFinish: number
  /** The provider holds its reservation until then. */
  expiresAt: number
  resourcesReserved: boolean
}

export interface Decline {
  jobId: string
  provider: string
  reasons: string[]
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

export interface Invocation {
  contract: SignedContract
  proof: ContractProof
  command: string[]
  env: Record<string, string>
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
}

export interface JobResult {
  jobId: string
  receipt: SignedReceipt
  stdout: string
  stderr: string
  truncated: boolean
  outputs: OutputFile[]
}

export interface SettleRequest {
  contractId: string
  receipt: SignedReceipt
  /** The requester's verdict after checking the outputs against the receipt. */
  verified: boolean
}
export type SettleReply = Settlement
export type VerifyReply = ContractProof
