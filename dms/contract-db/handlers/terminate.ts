/**
 * `/dms/contract/terminate`: closes an active contract with a reason code (specs/contract-db.md,
 * "Terminate"). Who may use which reason is checked here; what it pays, by the machine. A
 * provider's claim past settleBy is a terminate with reason REQUESTER_SILENT (claim.ts).
 */
import type { Logger } from 'pino'
import { REFUSAL, refuse } from '../../contracts/errors.js'
import { TERMINATION, type Settlement } from '../../contracts/model.js'
import type { TerminateRequest } from '../../protocol/messages.js'
import { claim, type ClaimDeps } from './claim.js'
import { checkedReceipt, closableFor, logged } from './closable.js'

export interface TerminateDeps extends ClaimDeps {
  log: Logger
}

export type TerminateHandler = (submitter: string, req: TerminateRequest | undefined) => Promise<Settlement>

export function terminateHandler(d: TerminateDeps): TerminateHandler {
  return async (submitter, req) => {
    const c = await closableFor(d.contracts, submitter, req?.contractId, 'TERMINATE')
    const { rec, t, role } = c
    const { reason, detail } = req!
    if (reason === TERMINATION.requesterSilent) {
      const claimed = await claim(d, c, submitter, req!)
      return logged(d.log, claimed.settlement!)
    }
    if (reason === TERMINATION.providerFault) {
      const closed = await d.contracts.close(rec, { type: 'TERMINATE', by: submitter, reason, detail })
      return logged(d.log, closed.settlement!)
    }
    if (reason === TERMINATION.requesterCancelled) {
      if (role !== 'requester')
        throw refuse(
          REFUSAL.badReason,
          'only the requester can cancel; a provider terminates with PROVIDER_FAULT',
        )
      // The time used: the provider's receipt when one came, otherwise the time since escrow locked.
      const wallSeconds =
        req!.receipt !== undefined ? checkedReceipt(t, req!.receipt).usage.wallSeconds : undefined
      const closed = await d.contracts.close(rec, {
        type: 'TERMINATE',
        by: submitter,
        reason,
        detail,
        wallSeconds,
      })
      return logged(d.log, closed.settlement!)
    }
    throw refuse(
      REFUSAL.badReason,
      `unknown termination reason ${String(reason)}: use ${TERMINATION.providerFault}, ${TERMINATION.requesterCancelled} or (a provider past settleBy) ${TERMINATION.requesterSilent}`,
    )
  }
}
