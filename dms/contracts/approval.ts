/**
 * Approval credentials: the contract-db's short-lived, signed statement that a peer is approved.
 * Issued on `/dms/approval/get` to an approved peer, attached by requesters to bid requests and
 * by providers to bids and declines, and checked offline by the receiver against the public key
 * of the contract-db it trusts. Spec: specs/contract-db.md ("Approval credentials") and
 * specs/protocol.md ("Approval").
 */
import type { KeyPair } from '../../actors/identity.js'
import { signDoc, verifyDoc } from './canonical.js'
import { DEFAULT_ROLES, DOMAIN, type ApprovalCredential, type Role } from './model.js'
import { publicKeyOfPeer } from './party.js'

/**
 * How long a credential is valid. It bounds how long a revoked peer can still get its bids
 * ranked and its bid requests answered (its contracts are refused at once: the contract-db checks
 * approval at verification), and it sets the load: each node asks once per half-life.
 * @default 600000 (10 minutes)
 */
export const APPROVAL_TTL_MS = 10 * 60_000

/** How far in the future `issuedAt` may be: the envelopes' clock-skew allowance. */
export const APPROVAL_CLOCK_SKEW_MS = 30_000

/** Why a credential is not accepted (the label of the counters that count it). */
export type ApprovalProblem =
  | 'no_approval'
  | 'approval_forged'
  | 'approval_other_peer'
  | 'approval_other_contract_db'
  | 'approval_expired'
  | 'approval_future'
  | 'approval_role'

/** Signs a credential for `peer` with its `roles`, valid from `now` for `ttlMs`. */
export function issueApproval(
  key: KeyPair,
  body: { peer: string; contractDb: string; now: number; ttlMs?: number; roles?: readonly Role[] },
): ApprovalCredential {
  const doc = {
    peer: body.peer,
    contractDb: body.contractDb,
    issuedAt: body.now,
    expiresAt: body.now + (body.ttlMs ?? APPROVAL_TTL_MS),
    roles: [...(body.roles ?? DEFAULT_ROLES)],
  }
  return { ...doc, signature: signDoc(key, DOMAIN.approval, doc) }
}

/** The roles a credential grants: its own, or `DEFAULT_ROLES` for one issued before roles. */
export function rolesOf(cred: Pick<ApprovalCredential, 'roles'>): readonly Role[] {
  return cred.roles ?? DEFAULT_ROLES
}

/** What a receiver wants of a credential (`role`: the one the message needs; none: any). */
export interface ApprovalWant {
  peer: string
  contractDb: string
  now: number
  clockSkewMs?: number
  role?: Role
}

/**
 * Checks a credential offline: it names `peer` (the message's sender peer), it was signed by the
 * trusted `contractDb` (key derived from its peer id), it has not expired and was not issued in
 * the future (beyond the clock-skew allowance), and it grants `role` when one is wanted.
 * Undefined when it is good. `signatureChecked`: the caller verified this very signature over
 * these fields before (ApprovalCache).
 */
export function checkApproval(
  cred: ApprovalCredential | undefined,
  want: ApprovalWant,
  opts: { signatureChecked?: boolean } = {},
): ApprovalProblem | undefined {
  if (cred === undefined) return 'no_approval'
  if (cred.contractDb !== want.contractDb) return 'approval_other_contract_db'
  if (cred.peer !== want.peer) return 'approval_other_peer'
  if (opts.signatureChecked !== true) {
    const key = publicKeyOfPeer(want.contractDb)
    const { signature, ...body } = cred
    if (key === undefined || !verifyDoc(key, DOMAIN.approval, body, signature)) return 'approval_forged'
  }
  if (cred.expiresAt <= want.now) return 'approval_expired'
  if (cred.issuedAt > want.now + (want.clockSkewMs ?? APPROVAL_CLOCK_SKEW_MS)) return 'approval_future'
  if (want.role !== undefined && !rolesOf(cred).includes(want.role)) return 'approval_role'
  return undefined
}
