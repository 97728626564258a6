/**
 * `/dms/account/funds`: a short-lived signed proof of what an approved peer (the envelope's sender
 * peer) can spend now, its account's balance (escrow excluded); NOT_APPROVED otherwise. Reads the
 * approvals and the account, writes nothing. Spec: specs/contract-db.md ("Funds proofs").
 */
import type { Clock } from '../../../actors/clock.js'
import type { KeyPair } from '../../../actors/identity.js'
import { REFUSAL, refuse } from '../../contracts/errors.js'
import { issueFunds } from '../../contracts/funds.js'
import type { FundsProof } from '../../contracts/model.js'

export interface FundsDeps {
  /** This contract-db's peer id. */
  self: string
  key: KeyPair
  clock: Pick<Clock, 'now'>
  approvals: { isApproved(peer: string): Promise<boolean> }
  accounts: { get(peer: string): Promise<{ balance: number }> }
  /** Lifetime of the proofs. @default FUNDS_TTL_MS */
  ttlMs?: number
}

export type FundsHandler = (peer: string) => Promise<FundsProof>

export function fundsHandler(d: FundsDeps): FundsHandler {
  return async (peer) => {
    if (!(await d.approvals.isApproved(peer)))
      throw refuse(
        REFUSAL.notApprovedPeer,
        `${peer} is not approved by this contract-db: its operator runs 'dms contract-db approve ${peer}'`,
      )
    const { balance } = await d.accounts.get(peer)
    return issueFunds(d.key, { peer, contractDb: d.self, available: balance, now: d.clock.now(), ttlMs: d.ttlMs })
  }
}
