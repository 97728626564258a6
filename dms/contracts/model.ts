/**
 * The contract and the documents around it. Spec: specs/protocol.md ("Contract closure",
 * "Settlement") and specs/contract-db.md. All amounts are integers of the smallest currency unit
 * ("micro-tokens", dms/contracts/money.ts).
 */
import type { PriceTerms } from '../pricing/terms.js'
import type { Resources } from '../resources/types.js'

export type ContractId = string

/**
 * A provider's bid, signed by the provider (`signature` over the rest, domain `dms/bid/v1`) so the
 * contract that embeds it can be checked by the contract-db.
 */
/** An engine's name as a bid gives it (dms/executor/engine.ts, `EngineName`). */
export const ENGINE_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/

export interface Bid {
  bidId: string
  jobId: string
  provider: string
  /** What is bid for, copied from the bid request. */
  resources: Resources
  image: string
  /**
   * The engine that will run the job (`ENGINE_NAME`: 1-32 of a-z 0-9 -). Absent from bids of
   * providers before engines were named, and of providers that measure none.
   */
  engine?: string
  maxDurationSeconds: number
  /**
   * What it costs (specs/pricing.md), signed with the bid; the contract's terms reference it here
   * and copy none of it. Read it with `priceOf(bid)`: absent from bids of dms 0.1, which carry
   * `pricePerHour` and `minJobPrice` instead.
   */
  price?: PriceTerms
  /** dms 0.1 only: the price per hour (`priceOf` reads it as per-hour terms). */
  pricePerHour?: number
  /** dms 0.1 only: a completed job pays at least this. */
  minJobPrice?: number
  /** The escrow the bid asks: `escrowFor(price, max duration)` (dms/pricing). 0 = volunteer. */
  total: number
  earliestStart: number
  expectedFinish: number
  /** The provider holds its reservation until then. */
  expiresAt: number
  resourcesReserved: boolean
  signature: string
}

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
  /**
   * Earlier versions only: a copy of the bid's resources, signed with these terms; when present it
   * must equal the bid's. Terms of this version carry none of the bid's fields: read what was bid
   * for with `termsResources`, `termsImage` and `termsMaxDuration` (terms.ts).
   */
  resources?: Resources
  /** Earlier versions only: a copy of the bid's image (see `resources`). */
  image?: string
  /**
   * What runs, signed: `workloadHash` of the workload the requester will invoke (dms/workload/hash.ts;
   * every member's artifact, command, env, workdir, network and resources). The provider refuses an
   * invocation whose workload hashes otherwise (`WORKLOAD_MISMATCH`). Required of new terms by the
   * provider and the contract-db (`WORKLOAD_UNSIGNED`); absent from contracts stored by earlier
   * versions, whose invocation is checked against the image and resources contracted for only.
   */
  workloadHash?: string
  /** Earlier versions only: a copy of the bid's max duration (see `resources`). */
  maxDurationSeconds?: number
  /**
   * dms 0.1 only: a copy of the bid's price per hour; when present it must equal it. The price is
   * the embedded bid's (`priceOf(terms.bid)`).
   */
  pricePerHour?: number
  /** Locked from the requester at verification: the bid's total for the max duration. 0 = volunteer. */
  escrow: number
  /**
   * The provider's signed bid, embedded so every party reads what was bid for from what the
   * provider actually signed (resources, image, max duration, price: terms.ts) and the contract-db
   * checks the terms against it (job, provider, escrow = its total).
   */
  bid: Bid
  createdAt: number
  /** The contract must be verified before this time. */
  expiresAt: number
  /**
   * The run must be started by then (the provider's start note at the contract-db, start.ts):
   * a contract not started by `startBy` expires with a full refund. Set by the requester to
   * max(createdAt, bid.earliestStart) + its start grace. Absent from contracts of dms 0.1 and of
   * requesters that set none: those have no start deadline.
   */
  startBy?: number
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
  /**
   * From then on the provider may claim its pay on its receipt, and until `settleBy` +
   * the claim window anyone may settle; then the contract-db expires it (specs/contract-db.md,
   * "Deadlines"). Absent from proofs of dms 0.1.
   */
  settleBy?: number
  contractDb: string
  signature: string
}

export interface Usage {
  wallSeconds: number
  cpuSeconds: number
  peakMemoryBytes: number
  /** A GPU run's busy GPU-seconds (utilisation × time, as sampled); absent without GPUs. */
  gpuSeconds?: number
  /** A GPU run's most GPU memory held at once, as sampled; absent without GPUs. */
  gpuPeakMemoryBytes?: number
}

// What a run left out of its outputs is the workload's (the engine reports it); the receipt signs it.
export { MAX_SKIPPED_DETAIL, type OutputsSkipped } from '../workload/outputs.js'
import type { OutputsSkipped } from '../workload/outputs.js'

/** The provider's signed account of one allocation's run. */
export interface Receipt {
  contractId: ContractId
  jobId: string
  allocationId: string
  status: 'completed' | 'failed' | 'timed_out' | 'cancelled'
  exitCode: number
  reason?: string
  outputsHash: string
  /** Present when entries of /outputs were left out of the outputs (and so of outputsHash). */
  outputsSkipped?: OutputsSkipped
  usage: Usage
  finishedAt: number
}

export interface SignedReceipt {
  receipt: Receipt
  signature: string
}

/** The requester's signed verdict on a receipt, after checking the outputs against it. */
export interface Verification {
  contractId: ContractId
  /** hashDoc(receipt): the receipt this verdict is about. */
  receiptHash: string
  verified: boolean
  outputsHashOk: boolean
  receiptSignatureOk: boolean
  verifiedAt: number
}

export interface SignedVerification {
  verification: Verification
  signature: string
}

/** Why a contract was closed without (or with a partial) settlement. Spec: specs/contract-db.md. */
export const TERMINATION = {
  /** The provider failed (silent, refused the invocation, could not run): the requester is refunded. */
  providerFault: 'PROVIDER_FAULT',
  /** The requester cancelled: the time used so far is paid, the rest refunded. */
  requesterCancelled: 'REQUESTER_CANCELLED',
  /**
   * Settlement with a negative verification that the contract-db's own check of the outputs upheld
   * (they do not match the receipt, or the provider did not let it fetch them): the requester is
   * refunded.
   */
  rejectedResult: 'REQUESTER_REJECTED_RESULT',
  /**
   * The provider's claim past `settleBy` (the requester stayed silent): paid by its receipt, as a
   * settlement; the requester may dispute it for a while (specs/contract-db.md, "Claims").
   */
  requesterSilent: 'REQUESTER_SILENT',
  /** Closed by the contract-db itself: nobody settled or claimed it in time; fully refunded. */
  expired: 'EXPIRED',
  /**
   * A settlement with a negative verification that the contract-db checked and found wrong: it
   * fetched the outputs from the provider and they match the receipt, so the provider is paid by
   * its receipt as a verified settlement would pay (specs/contract-db.md, "Rejections").
   */
  rejectionOverruled: 'REJECTION_OVERRULED',
} as const
export type TerminationReason = (typeof TERMINATION)[keyof typeof TERMINATION]

/** The contract-db's signed record of how a contract was settled or terminated. */
export interface Settlement {
  contractId: ContractId
  /** settled: by receipt and verification; terminated: with `reason`. */
  outcome: 'settled' | 'terminated'
  reason?: TerminationReason
  paidToProvider: number
  refundedToRequester: number
  billedSeconds: number
  settledAt: number
  contractDb: string
  signature: string
}

/**
 * The provider's statement that it started the run of a contract (specs/contract-db.md, "Start
 * notes"), signed by the provider and sent to the contract-db before the container starts.
 */
export interface StartNote {
  contractId: ContractId
  /** The provider's peer id. */
  provider: string
  /** When the provider began the run (its clock). */
  at: number
}

export interface SignedStartNote {
  note: StartNote
  signature: string
}

/** The contract-db's answer to a start note: the time it recorded the start at. */
export interface StartAck {
  contractId: ContractId
  startedAt: number
}

/**
 * The contract-db's short-lived statement that `peer` is approved (specs/contract-db.md,
 * "Approval credentials"). Requesters attach theirs to bid requests and providers to bids and
 * declines; a receiver checks it offline against the contract-db it trusts (`checkApproval`).
 */
export interface ApprovalCredential {
  peer: string
  /** Peer id of the contract-db that signed it. */
  contractDb: string
  issuedAt: number
  expiresAt: number
  /**
   * What the peer is approved to do (signed). Absent on credentials issued before roles existed:
   * those count as `DEFAULT_ROLES`.
   */
  roles?: Role[]
  signature: string
}

/**
 * The contract-db's short-lived statement of what `peer` can spend now (specs/contract-db.md,
 * "Funds proofs"). A requester attaches it to its bid requests; a provider checks it offline
 * against the job's max price before it reserves anything (`checkFunds`).
 */
export interface FundsProof {
  peer: string
  /** Peer id of the contract-db that signed it. */
  contractDb: string
  /** The account's spendable balance (escrow excluded) when it was issued, micro-tokens. */
  available: number
  issuedAt: number
  expiresAt: number
  signature: string
}

/**
 * What an approved peer may do (specs/contract-db.md, "Roles"): post bid requests and hold
 * reservations (`requester`), bid and publish capacity news (`provider`), serve as a circuit relay
 * for approved peers (`relay`).
 */
export type Role = 'requester' | 'provider' | 'relay'

/** Every role, in the order they are listed. */
export const ROLES: readonly Role[] = ['requester', 'provider', 'relay']

/** The roles of an approval that names none: what every approved peer could do before roles. */
export const DEFAULT_ROLES: readonly Role[] = ['requester', 'provider']

/**
 * A requester's delegation of a blob grant (specs/data-plane.md, "Delegated grants"): `owner`
 * (the requester, to whom the node serving `sha256` granted it) lets `grantee` (another provider)
 * fetch it until `expiresAt`. Signed by the owner's node key.
 */
export interface BlobGrant {
  sha256: string
  owner: string
  grantee: string
  expiresAt: number
  signature: string
}

/** Signature domains: one per document kind. */
export const DOMAIN = {
  contract: 'dms/contract/v1',
  proof: 'dms/contract-proof/v1',
  receipt: 'dms/receipt/v1',
  settlement: 'dms/settlement/v1',
  bid: 'dms/bid/v1',
  verification: 'dms/verification/v1',
  approval: 'dms/approval/v1',
  blobGrant: 'dms/blob-grant/v1',
  startNote: 'dms/start-note/v1',
  funds: 'dms/funds/v1',
} as const
