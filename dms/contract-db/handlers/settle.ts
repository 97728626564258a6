/**
 * `/dms/contract/settle`: the provider's receipt and the requester's verification close an active
 * contract (specs/contract-db.md, "Settle"). The machine bills it (billing.ts) and moves the money.
 */
import type { Logger } from 'pino'
import { keyFromString } from '../../../actors/identity.js'
import { hashDoc, verifyDoc } from '../../contracts/canonical.js'
import { checkVerification } from '../../contracts/checks.js'
import { REFUSAL, refuse } from '../../contracts/errors.js'
import { DOMAIN, type Settlement } from '../../contracts/model.js'
import type { SettleRequest } from '../../protocol/messages.js'
import { settleClaimed, type ClaimDeps } from './claim.js'
import { checkedReceipt, closableFor, logged } from './closable.js'

export interface SettleDeps extends ClaimDeps {
  log: Logger
}

export type SettleHandler = (submitter: string, req: SettleRequest | undefined) => Promise<Settlement>

export function settleHandler(d: SettleDeps): SettleHandler {
  return async (submitter, req) => {
    // A claimed contract: the claim's settlement, or the requester's dispute of it (claim.ts).
    const stored = typeof req?.contractId === 'string' ? await d.contracts.get(req.contractId) : undefined
    if (
      stored?.state === 'claimed' &&
      (submitter === stored.contract.terms.requester.peer ||
        submitter === stored.contract.terms.provider.peer)
    )
      return settleClaimed(d, stored, submitter, req!)
    const { rec, t } = await closableFor(d.contracts, submitter, req?.contractId, 'SETTLE')
    const receipt = checkedReceipt(t, req?.receipt)
    const problem = checkVerification(req?.verification, t.contractId, hashDoc(receipt))
    if (problem !== undefined) throw refuse(REFUSAL.badVerification, problem)
    const v = req!.verification
    if (!verifyDoc(keyFromString(t.requester.publicKey), DOMAIN.verification, v.verification, v.signature))
      throw refuse(REFUSAL.badSignature, 'verification is not signed by the requester')
    const closed = await d.contracts.close(rec, {
      type: 'SETTLE',
      by: submitter,
      receipt,
      verified: v.verification.verified,
    })
    return logged(d.log, closed.settlement!)
  }
}
