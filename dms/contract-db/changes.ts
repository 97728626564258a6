/**
 * The changes a contract's transitions write: its record in the state it reaches, and the money
 * that moves with it, in one atomic batch (specs/contract-db.md, "States"). Pure: the contract
 * machine plans a change with these, and its `commit` effect writes it.
 */
import type { RefusedError } from '../../actors/errors.js'
import { REFUSAL, refuse } from '../contracts/errors.js'
import type { Settlement, SignedReceipt, SignedStartNote, SignedVerification } from '../contracts/model.js'
import {
  claimClosing,
  expireClosing,
  settleClosing,
  terminateClosing,
  type SettleFacts,
  type TerminateFacts,
} from './billing.js'
import { closeMoves, lockMoves, type Move } from './ledger.js'
import type { ContractRecord, StoredState } from './records.js'

/** A contract's record without its state: the contract machine's context. */
export type ContractData = Omit<ContractRecord, 'state'>

/** What a transition writes, atomically. */
export interface Change {
  /** The resting state the contract is in once the change is written. */
  to: StoredState
  /** The record as stored after the change (`state` = `to`). */
  record: ContractRecord
  /** The accounts it moves. */
  moves: Move[]
  /** The stored record it was planned from; none for a lock (nothing is stored before it). */
  base?: ContractRecord
}

/** Signs a settlement's body with the contract-db's key (under DOMAIN.settlement). */
export type SignSettlement = (body: Omit<Settlement, 'signature'>) => string

/** The events that close a contract, with the party that sent them. */
export type CloseFacts =
  | ({ type: 'SETTLE'; by: string } & SettleFacts)
  | ({ type: 'TERMINATE'; by: string; detail?: string } & TerminateFacts)
  | { type: 'CLAIM'; by: string; receipt: SignedReceipt; disputeWindowMs: number; detail?: string }
  | { type: 'EXPIRE'; by: string; detail?: string }

/** The provider's start note (handlers/start.ts): recorded on the active contract, no money moves. */
export interface StartFacts {
  type: 'START'
  by: string
  note: SignedStartNote
}

/** The requester's dispute of a provider's claim: recorded for the operator, no money moves. */
export interface DisputeFacts {
  type: 'DISPUTE'
  by: string
  verification: SignedVerification
}

const reached = (data: ContractData, to: StoredState, now: number): ContractRecord => ({
  ...data,
  state: to,
  history: [...data.history, { state: to, at: now }],
})

/** Verification: the contract becomes active and its escrow is locked from the requester. */
export function lockChange(data: ContractData, now: number): Change {
  return { to: 'active', record: reached(data, 'active', now), moves: lockMoves(data.contract.terms) }
}

/**
 * Settle or terminate: the contract closes with a signed settlement; the provider is paid what
 * the billing rules say, the rest of the escrow is refunded.
 */
export function closeChange(data: ContractData, e: CloseFacts, now: number, sign: SignSettlement): Change {
  const t = data.contract.terms
  const at = { activatedAt: data.activatedAt, now }
  const how =
    e.type === 'SETTLE'
      ? settleClosing(t, e, at)
      : e.type === 'TERMINATE'
        ? terminateClosing(t, e, at)
        : e.type === 'CLAIM'
          ? claimClosing(t, e.receipt.receipt, at)
          : expireClosing()
  const to = how.to ?? how.outcome
  const paid = Math.min(how.paid, t.escrow)
  const body = {
    contractId: t.contractId,
    outcome: how.outcome,
    ...(how.reason !== undefined ? { reason: how.reason } : {}),
    paidToProvider: paid,
    refundedToRequester: t.escrow - paid,
    billedSeconds: how.ms / 1000,
    settledAt: now,
    contractDb: t.contractDb,
  }
  const settlement: Settlement = { ...body, signature: sign(body) }
  const detail = e.type === 'SETTLE' ? undefined : e.detail
  const arbitration = e.type === 'SETTLE' && e.arbitration !== undefined ? { arbitration: e.arbitration } : {}
  const claim =
    e.type === 'CLAIM' ? { claim: { receipt: e.receipt, disputeBy: now + e.disputeWindowMs } } : {}
  return {
    to,
    record: { ...reached(data, to, now), settlement, closedBy: e.by, detail, ...claim, ...arbitration },
    moves: closeMoves(t, paid),
    base: { ...data, state: 'active' },
  }
}

/** A dispute of a claim: the record keeps the requester's verification; nothing moves. */
export function disputeChange(data: ContractData, e: DisputeFacts, now: number): Change {
  const record = { ...data, state: 'claimed' as const, dispute: { verification: e.verification, at: now } }
  return { to: 'claimed', record, moves: [], base: { ...data, state: 'claimed' } }
}

/** A start note: the active contract records when it started; nothing moves. */
export function startChange(data: ContractData, e: StartFacts, now: number): Change {
  return {
    to: 'active',
    record: { ...data, state: 'active', started: { at: now, note: e.note } },
    moves: [],
    base: { ...data, state: 'active' },
  }
}

/** What tells two versions of a contract's record apart: every change moves one of these. */
const versionOf = (rec: ContractRecord) =>
  `${rec.state}/${rec.history.length}/${rec.started !== undefined}/${rec.dispute !== undefined}`

/**
 * Why `change` must not be written over `stored` (the record as its transaction reads it), or
 * undefined when it may. Another writer (a second contract-db instance on the same database,
 * specs/contract-db.md "Several instances") may have changed the contract since the change was
 * planned: then it is refused as a repeat would be, with the state and settlement now stored, and
 * nothing moves twice.
 */
export function staleChange(stored: ContractRecord | undefined, change: Change): RefusedError | undefined {
  const id = change.record.contract.terms.contractId
  if (change.base === undefined)
    return stored === undefined
      ? undefined
      : refuse(REFUSAL.duplicate, `contract ${id} was already submitted`, { state: stored.state })
  if (stored !== undefined && versionOf(stored) === versionOf(change.base)) return undefined
  return refuse(REFUSAL.notActive, `contract ${id} changed meanwhile: it is ${stored?.state ?? 'gone'}`, {
    state: stored?.state,
    settlement: stored?.settlement,
  })
}
