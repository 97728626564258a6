/**
 * `/dms/account/funds`: a short-lived signed proof of what a peer approved as a `requester` (the
 * envelope's sender peer) can spend now, its account's balance (escrow excluded); NOT_APPROVED for
 * a peer not approved, PARTY_ROLE_NOT_APPROVED for one approved without that role. Reads the
 * approvals and the account, writes nothing. Spec: specs/contract-db.md ("Funds proofs").
 */
import type { Clock } from '../../../actors/clock.js'
import type { KeyPair } from '../../../actors/identity.js'
import { REFUSAL, refuse } from '../../contracts/errors.js'
import { issueFunds } from '../../contracts/funds.js'
import type { FundsProof, Role } from '../../contracts/model.js'

export interface FundsDeps {
  /** This contract-db's peer id. */
  self: string
  key: KeyPair
  clock: Pick<Clock, 'now'>
  approvals: { rolesOf(peer: string): Promise<readonly Role[] | undefined> }
  accounts: { get(peer: string): Promise<{ balance: number }> }
  /** Lifetime of the proofs. @default FUNDS_TTL_MS */
  ttlMs?: number
}

export type FundsHandler = (peer: string) => Promise<FundsProof>

export function fundsHandler(d: FundsDeps): FundsHandler {
  return async (peer) => {
    const roles = await d.approvals.rolesOf(peer)
    if (roles === undefined)
      throw refuse(
        REFUSAL.notApprovedPeer,
        `${peer} is not approved by this contract-db: its operator runs 'dms contract-db approve ${peer}'`,
      )
    if (!roles.includes('requester'))
      throw refuse(
        REFUSAL.wrongRole,
        `${peer} is not approved as a requester (roles: ${roles.join(',')}): its operator runs 'dms contract-db approve ${peer} --role requester,…'`,
      )
    const { balance } = await d.accounts.get(peer)
    return issueFunds(d.key, {
      peer,
      contractDb: d.self,
      available: balance,
      now: d.clock.now(),
      ttlMs: d.ttlMs,
    })
  }
}
