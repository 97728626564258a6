/**
 * `/dms/approval/get`: a short-lived signed credential for an approved peer (the envelope's sender
 * peer, checked against its connection), else NOT_APPROVED with the command that approves it.
 * Reads the approvals, writes nothing. Spec: specs/contract-db.md ("Approval credentials").
 */
import type { Clock } from '../../../actors/clock.js'
import type { KeyPair } from '../../../actors/identity.js'
import { issueApproval } from '../../contracts/approval.js'
import { REFUSAL, refuse } from '../../contracts/errors.js'
import type { ApprovalCredential } from '../../contracts/model.js'

export interface ApprovalDeps {
  /** This contract-db's peer id. */
  self: string
  key: KeyPair
  clock: Pick<Clock, 'now'>
  approvals: { isApproved(peer: string): Promise<boolean> }
  /** Lifetime of the credentials. @default APPROVAL_TTL_MS */
  ttlMs?: number
}

export type ApprovalHandler = (peer: string) => Promise<ApprovalCredential>

export function approvalHandler(d: ApprovalDeps): ApprovalHandler {
  return async (peer) => {
    if (!(await d.approvals.isApproved(peer)))
      throw refuse(
        REFUSAL.notApprovedPeer,
        `${peer} is not approved by this contract-db: its operator runs 'dms contract-db approve ${peer}'`,
      )
    return issueApproval(d.key, { peer, contractDb: d.self, now: d.clock.now(), ttlMs: d.ttlMs })
  }
}
