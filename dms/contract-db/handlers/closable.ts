/**
 * What settle and terminate check first (specs/contract-db.md, "Settle", checks 1 to 3 and the
 * receipt): the contract exists, the submitter is a party, the contract's machine accepts the
 * event; and a receipt is well formed and signed by the provider.
 */
import { keyFromString } from '../../../actors/identity.js'
import { verifyDoc } from '../../contracts/canonical.js'
import { checkReceipt } from '../../contracts/checks.js'
import { REFUSAL, refuse } from '../../contracts/errors.js'
import type { Logger } from 'pino'
import {
  DOMAIN,
  type ContractTerms,
  type Receipt,
  type Settlement,
  type SignedReceipt,
} from '../../contracts/model.js'
import type { CloseFacts, DisputeFacts, StartFacts } from '../changes.js'
import type { ContractRecord } from '../records.js'

/** The contracts as the closing handlers need them. */
export interface ClosableContracts {
  get(id: string): Promise<ContractRecord | undefined>
  /** Whether the contract's machine accepts an event of `type` in its state. */
  accepts(rec: ContractRecord, type: CloseFacts['type'] | 'DISPUTE' | 'START'): boolean
  /** Sends the closing event (or a dispute, or a start note); resolves with the record once stored. */
  close(rec: ContractRecord, facts: CloseFacts | DisputeFacts | StartFacts): Promise<ContractRecord>
}

export interface Closable {
  rec: ContractRecord
  t: ContractTerms
  role: 'requester' | 'provider'
}

/** The contract `contractId`, if `submitter` is one of its parties and it accepts `type`. */
export async function closableFor(
  contracts: ClosableContracts,
  submitter: string,
  contractId: unknown,
  type: CloseFacts['type'] | 'DISPUTE',
): Promise<Closable> {
  const rec = typeof contractId === 'string' ? await contracts.get(contractId) : undefined
  if (rec === undefined) throw refuse(REFUSAL.unknown, `no contract ${String(contractId)}`)
  const t = rec.contract.terms
  const role =
    submitter === t.requester.peer ? 'requester' : submitter === t.provider.peer ? 'provider' : undefined
  if (role === undefined)
    throw refuse(REFUSAL.notParty, `${submitter} is not a party to contract ${t.contractId}`)
  if (!contracts.accepts(rec, type))
    throw refuse(REFUSAL.notActive, `contract ${t.contractId} is already ${rec.state}`, {
      state: rec.state,
      settlement: rec.settlement,
    })
  return { rec, t, role }
}

/** The receipt, once well formed, about this contract and signed by its provider. */
export function checkedReceipt(t: ContractTerms, signed: SignedReceipt | undefined): Receipt {
  const problem = checkReceipt(signed, t)
  if (problem !== undefined) throw refuse(REFUSAL.badReceipt, problem)
  if (!verifyDoc(keyFromString(t.provider.publicKey), DOMAIN.receipt, signed!.receipt, signed!.signature))
    throw refuse(REFUSAL.badSignature, 'receipt is not signed by the provider')
  return signed!.receipt
}

/** Logs a closed contract's settlement, and returns it. */
export function logged(log: Logger, s: Settlement): Settlement {
  log.info(
    {
      contractId: s.contractId,
      state: s.outcome,
      reason: s.reason,
      paid: s.paidToProvider,
      refund: s.refundedToRequester,
    },
    'contract closed',
  )
  return s
}
