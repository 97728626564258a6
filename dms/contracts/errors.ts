import { RefusedError } from '../../actors/errors.js'

/** Stable refusal codes of the contract-db (they cross the wire in RemoteError.code). */
export const REFUSAL = {
  wrongContractDb: 'WRONG_CONTRACT_DB',
  notParty: 'NOT_A_PARTY',
  notApproved: 'PARTY_NOT_APPROVED',
  badParty: 'BAD_PARTY_KEY',
  badSignature: 'BAD_SIGNATURE',
  expired: 'CONTRACT_EXPIRED',
  duplicate: 'CONTRACT_EXISTS',
  badTerms: 'BAD_TERMS',
  insufficientFunds: 'INSUFFICIENT_FUNDS',
  unknown: 'UNKNOWN_CONTRACT',
  notActive: 'CONTRACT_NOT_ACTIVE',
  badReceipt: 'BAD_RECEIPT',
  badVerification: 'BAD_VERIFICATION',
  badReason: 'BAD_REASON',
  badPeerId: 'BAD_PEER_ID',
  /** A requester at its limit of active volunteer contracts. */
  tooManyContracts: 'TOO_MANY_CONTRACTS',
  /** A provider's claim before the contract's settleBy. */
  claimTooEarly: 'CLAIM_TOO_EARLY',
  /** A dispute after the claim's dispute window. */
  disputeClosed: 'DISPUTE_WINDOW_CLOSED',
  /** `/dms/approval/get` from a peer the operator has not approved (or has revoked). */
  notApprovedPeer: 'NOT_APPROVED',
  /** An approval naming a role that does not exist (or none). */
  badRole: 'BAD_ROLE',
  /** A party approved, but not for its role in the contract (a requester that is not `requester`). */
  wrongRole: 'PARTY_ROLE_NOT_APPROVED',
} as const

export const refuse = (code: string, message: string, data?: unknown) => new RefusedError(code, message, data)
