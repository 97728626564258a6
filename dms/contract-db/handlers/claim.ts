/**
 * Claims and disputes (specs/contract-db.md, "Claims"): past `settleBy` a provider whose
 * requester stayed silent terminates with reason REQUESTER_SILENT and its signed receipt, and is
 * paid by it as a verified settlement would pay (the contract rests `claimed`); its requester may
 * dispute the claim once, until `claim.disputeBy`, with its signed verification (a settle on the
 * claimed contract with `verified = false`): the dispute is kept for the operator
 * (`dms contract-db disputes`), and no money moves.
 */
import { keyFromString } from '../../../actors/identity.js'
import type { Clock } from '../../../actors/clock.js'
import { hashDoc, verifyDoc } from '../../contracts/canonical.js'
import { checkVerification } from '../../contracts/checks.js'
import { REFUSAL, refuse } from '../../contracts/errors.js'
import { DOMAIN, type Settlement } from '../../contracts/model.js'
import type { SettleRequest, TerminateRequest } from '../../protocol/messages.js'
import { deadlinesOf, type DeadlineConfig } from '../deadlines.js'
import type { ContractRecord } from '../records.js'
import { checkedReceipt, type Closable, type ClosableContracts } from './closable.js'

export interface ClaimDeps {
  contracts: ClosableContracts
  clock: Pick<Clock, 'now'>
  deadlines: DeadlineConfig
}

/** The provider's claim (terminate, reason REQUESTER_SILENT): resolves with the claimed record. */
export async function claim(
  d: ClaimDeps,
  c: Closable,
  submitter: string,
  req: TerminateRequest,
): Promise<ContractRecord> {
  if (c.role !== 'provider')
    throw refuse(REFUSAL.badReason, 'only the provider claims; a requester settles or terminates')
  const { settleBy } = deadlinesOf(c.rec, d.deadlines)
  if (d.clock.now() < settleBy)
    throw refuse(
      REFUSAL.claimTooEarly,
      `contract ${c.t.contractId} can be claimed from ${new Date(settleBy).toISOString()}`,
      {
        settleBy,
      },
    )
  checkedReceipt(c.t, req.receipt) // well formed, about this contract, signed by the provider
  return d.contracts.close(c.rec, {
    type: 'CLAIM',
    by: submitter,
    receipt: req.receipt!,
    disputeWindowMs: d.deadlines.disputeWindowMs,
    detail: req.detail,
  })
}

/**
 * A settle on a claimed contract: from the provider, or a requester that agrees (`verified`), the
 * claim's settlement; from a requester that does not, within the window, a dispute is recorded.
 */
export async function settleClaimed(
  d: ClaimDeps,
  rec: ContractRecord,
  submitter: string,
  req: SettleRequest,
): Promise<Settlement> {
  const t = rec.contract.terms
  const kept = { state: rec.state, settlement: rec.settlement }
  if (submitter !== t.requester.peer)
    throw refuse(REFUSAL.notActive, `contract ${t.contractId} is already claimed`, kept)
  const receipt = checkedReceipt(t, req.receipt)
  const problem = checkVerification(req.verification, t.contractId, hashDoc(receipt))
  if (problem !== undefined) throw refuse(REFUSAL.badVerification, problem)
  const v = req.verification
  if (!verifyDoc(keyFromString(t.requester.publicKey), DOMAIN.verification, v.verification, v.signature))
    throw refuse(REFUSAL.badSignature, 'verification is not signed by the requester')
  if (v.verification.verified) return rec.settlement!
  if (rec.dispute !== undefined)
    throw refuse(REFUSAL.notActive, `the claim on ${t.contractId} is already disputed`, kept)
  if (d.clock.now() > (rec.claim?.disputeBy ?? 0))
    throw refuse(
      REFUSAL.disputeClosed,
      `the claim on ${t.contractId} could be disputed until ${new Date(rec.claim?.disputeBy ?? 0).toISOString()}`,
      kept,
    )
  const disputed = await d.contracts.close(rec, { type: 'DISPUTE', by: submitter, verification: v })
  return disputed.settlement!
}
