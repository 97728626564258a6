/**
 * `/dms/approval/get`: a short-lived signed credential for an approved peer (the envelope's sender
 * peer, checked against its connection) naming the roles it is approved for, else NOT_APPROVED
 * with the command that approves it.
 * Reads the approvals, writes nothing. Spec: specs/contract-db.md ("Approval credentials").
 */
import type { Clock } from '../../../actors/clock.js'
import type { KeyPair } from '../../../actors/identity.js'
import { issueApproval } from '../../contracts/approval.js'
import { REFUSAL, refuse } from '../../contracts/errors.js'
import type { ApprovalCredential, Role } from '../../contracts/model.js'

export interface ApprovalDeps {
  /** This contract-db's peer id. */
  self: string
  key: KeyPair
  clock: Pick<Clock, 'now'>
  approvals: { rolesOf(peer: string): Promise<readonly Role[] | undefined> }
  /** Lifetime of the credentials. @default APPROVAL_TTL_MS */
  ttlMs?: number
}

export type ApprovalHandler = (peer: string) => Promise<ApprovalCredential>

export function approvalHandler(d: ApprovalDeps): ApprovalHandler {
  return async (peer) => {
    const roles = await d.approvals.rolesOf(peer)
    if (roles === undefined)
      throw refuse(
        REFUSAL.notApprovedPeer,
        `${peer} is not approved by this contract-db: its operator runs 'dms contract-db approve ${peer}'`,
      )
    return issueApproval(d.key, { peer, contractDb: d.self, now: d.clock.now(), ttlMs: d.ttlMs, roles })
  }
}
