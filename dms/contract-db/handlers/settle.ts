/**
 * `/dms/contract/settle`: the provider's receipt and the requester's verification close an active
 * contract (specs/contract-db.md, "Settle"). The machine bills it (billing.ts) and moves the money.
 * A rejection (`verified = false`) is not taken on the requester's word: the service first has
 * the contract-db check the outputs itself (`rejection` names what to check, arbiter.ts), and the
 * settle then closes on that check (overruled: paid; upheld: refunded).
 */
import type { Logger } from 'pino'
import { keyFromString } from '../../../actors/identity.js'
import { hashDoc, verifyDoc } from '../../contracts/canonical.js'
import { checkVerification } from '../../contracts/checks.js'
import { REFUSAL, refuse } from '../../contracts/errors.js'
import { DOMAIN, type ContractTerms, type Settlement, type SignedReceipt } from '../../contracts/model.js'
import type { SettleRequest } from '../../protocol/messages.js'
import type { Arbitration, ContractRecord } from '../records.js'
import { settleClaimed, type ClaimDeps } from './claim.js'
import { checkedReceipt, closableFor, logged, type Closable } from './closable.js'

export interface SettleDeps extends ClaimDeps {
  log: Logger
}

/** Settles; `arbitration`: the contract-db's check of a rejection (required to close on one). */
export type SettleHandler = (
  submitter: string,
  req: SettleRequest | undefined,
  arbitration?: Arbitration,
) => Promise<Settlement>

/**
 * A settle's rejection to check before it is settled: the active contract's terms and the receipt
 * the requester rejected. Undefined when there is none to check (the verdict verifies, or the
 * contract is claimed: a rejection of a claim is a dispute). Refuses what settle would refuse, so
 * nothing is fetched for a settle that cannot close the contract.
 */
export type RejectionHandler = (
  submitter: string,
  req: SettleRequest | undefined,
) => Promise<{ terms: ContractTerms; receipt: SignedReceipt } | undefined>

/** A claimed contract (from a party): settled by its claim, or disputed (claim.ts). */
const claimedBy = (stored: ContractRecord | undefined, submitter: string) =>
  stored?.state === 'claimed' &&
  (submitter === stored.contract.terms.requester.peer || submitter === stored.contract.terms.provider.peer)

/** The closable contract of a settle, its checked receipt and the requester's signed verdict. */
async function checkedSettle(d: SettleDeps, submitter: string, req: SettleRequest | undefined) {
  const c: Closable = await closableFor(d.contracts, submitter, req?.contractId, 'SETTLE')
  const receipt = checkedReceipt(c.t, req?.receipt)
  const problem = checkVerification(req?.verification, c.t.contractId, hashDoc(receipt))
  if (problem !== undefined) throw refuse(REFUSAL.badVerification, problem)
  const v = req!.verification
  if (!verifyDoc(keyFromString(c.t.requester.publicKey), DOMAIN.verification, v.verification, v.signature))
    throw refuse(REFUSAL.badSignature, 'verification is not signed by the requester')
  return { ...c, receipt, verified: v.verification.verified }
}

export function settleHandler(d: SettleDeps): SettleHandler {
  return async (submitter, req, arbitration) => {
    // A claimed contract: the claim's settlement, or the requester's dispute of it (claim.ts).
    const stored = typeof req?.contractId === 'string' ? await d.contracts.get(req.contractId) : undefined
    if (claimedBy(stored, submitter)) return settleClaimed(d, stored!, submitter, req!)
    const { rec, receipt, verified } = await checkedSettle(d, submitter, req)
    // A rejection closes only on the contract-db's own check of it: without one it is upheld.
    const checked =
      verified || arbitration !== undefined
        ? arbitration
        : { outcome: 'upheld' as const, reason: 'not checked by the contract-db', at: d.clock.now() }
    const closed = await d.contracts.close(rec, {
      type: 'SETTLE',
      by: submitter,
      receipt,
      verified,
      ...(verified ? {} : { arbitration: checked }),
    })
    if (checked !== undefined)
      d.log.info({ contractId: rec.contract.terms.contractId, ...checked }, 'rejected result checked')
    return logged(d.log, closed.settlement!)
  }
}

export function rejectionHandler(d: SettleDeps): RejectionHandler {
  return async (submitter, req) => {
    const stored = typeof req?.contractId === 'string' ? await d.contracts.get(req.contractId) : undefined
    if (claimedBy(stored, submitter)) return undefined
    const { t, verified } = await checkedSettle(d, submitter, req)
    return verified ? undefined : { terms: t, receipt: req!.receipt }
  }
}
