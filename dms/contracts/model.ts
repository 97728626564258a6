/**
 * The contract and the documents around it. Spec: specs/protocol.md ("Contract closure",
 * "Settlement"). All amounts are integers of the smallest currency unit ("micro-tokens").
 */
import type { Resources } from '../resources/types.js'

export type ContractId = string

/** A party as it appears in documents: libp2p peer id and Ed25519 public key (base64url). */
export interface Party {
  peer: string
  publicKey: string
}

export interface ContractTerms {
  contractId: ContractId
  jobId: string
  bidId: string
  requester: Party
  provider: Party
  /** Peer id of the contract-db that verifies and holds escrow. */
  contractDb: string
  resources: Resources
  image: string
  maxDurationSeconds: number
  pricePerHour: number
  /** Locked from the requester at verification: the bid's total for the max duration. 0 = volunteer. */
  escrow: number
  createdAt: number
  /** The contract must be verified before this time. */
  expiresAt: number
}

export interface SignedContract {
  terms: ContractTerms
  requesterSignature: string
  providerSignature?: string
}

/** The contract-db's signed statement that a contract is valid and its escrow is locked. */
export interface ContractProof {
  contractId: ContractId
  termsHash: string
  escrowLocked: number
  issuedAt: number
  contractDb: string
  signature: string
}

export interface Usage {
  wallSeconds: number
  cpuSeconds: number
  peakMemoryBytes: number
}

/** The provider's signed account of one allocation's run. */
export interface Receipt {
  contractId: ContractId
  jobId: string
  allocationId: string
  status: 'completed' | 'failed' | 'timed_out' | 'cancelled'
  exitCode: number
  reason?: string
  outputsHash: string
  usage: Usage
  finishedAt: number
}

export interface SignedReceipt {
  receipt: Receipt
  signature: string
}

/** The contract-db's signed record of how a contract was settled. */
export interface Settlement {
  contractId: ContractId
  paidToProvider: number
  refundedToRequester: number
  billedSeconds: number
  settledAt: number
  contractDb: string
  signature: string
}

/** Signature domains: one per document kind. */
export const DOMAIN = {
  contract: 'dms/contract/v1',
  proof: 'dms/contract-proof/v1',
  receipt: 'dms/receipt/v1',
  settlement: 'dms/settlement/v1',
} as const

/** What the provider is paid for `seconds` of use at `pricePerHour`, capped at the escrow. */
export function costOf(seconds: number, pricePerHour: number, cap: number): number {
  return Math.min(cap, Math.ceil((Math.max(0, seconds) * pricePerHour) / 3600))
}
