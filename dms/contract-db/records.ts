/**
 * What the contract-db stores, one sublevel per kind (named in dms/store/tables.ts, `cdb-*`). Spec:
 * specs/contract-db.md ("Accounts and approvals", "States"). These shapes are the ones dms 0.1
 * stored (test/fixtures/v0.1): a change of shape comes with a migration in `restoreRecord`.
 */
import type {
  ContractProof,
  Role,
  Settlement,
  SignedContract,
  SignedReceipt,
  SignedStartNote,
  SignedVerification,
} from '../contracts/model.js'
import type { Amount } from '../contracts/money.js'

export interface Account {
  peer: string
  /** Spendable balance, micro-tokens. */
  balance: Amount
  /** Locked in active contracts, micro-tokens. */
  escrow: Amount
}

/** What the contract-db found when it checked a rejected result itself (arbiter.ts). */
export interface Arbitration {
  /** overruled: the outputs check, the provider is paid; upheld: they do not, refunded. */
  outcome: 'overruled' | 'upheld'
  /** Why, in words (the check's failure, or that the outputs matched the receipt). */
  reason: string
  /** When it was decided (clock ms). */
  at: number
}

export interface ApprovedEntity {
  peer: string
  approvedAt: number
  /** What it may do; absent on approvals stored before roles: `DEFAULT_ROLES`. */
  roles?: Role[]
}

/**
 * The states a contract record is stored in: the contract machine's resting states. Its other
 * states (`proposed`, `locking`, `settling`) last while a change is written and are never stored.
 */
export type StoredState = 'active' | 'settled' | 'terminated' | 'claimed' | 'expired'

export const STORED_STATES: readonly StoredState[] = ['active', 'settled', 'terminated', 'claimed', 'expired']

export interface ContractRecord {
  contract: SignedContract
  /** The contract machine's state: its persisted form, with the fields below as its context. */
  state: StoredState
  proof: ContractProof
  /** When escrow was locked (the proof's issuedAt). */
  activatedAt: number
  /**
   * From then on the provider may claim; at `settleBy` + the claim window the contract expires
   * (`deadlinesOf`, deadlines.ts). Absent from records of dms 0.1: derived from `activatedAt`.
   */
  settleBy?: number
  /**
   * The provider's start note (handlers/start.ts): when the contract-db recorded it, and the note.
   * A contract with a `startBy` and no start by then expires (deadlines.ts). Absent until started.
   */
  started?: { at: number; note: SignedStartNote }
  settlement?: Settlement
  /** A provider's claim (state `claimed`): the receipt it was paid on, and until when it can be disputed. */
  claim?: { receipt: SignedReceipt; disputeBy: number }
  /** The requester's dispute of a claim: its signed verification, for the operator. */
  dispute?: { verification: SignedVerification; at: number }
  /** A rejected result the contract-db checked itself (arbiter.ts): overruled or upheld, and why. */
  arbitration?: Arbitration
  /** Which party closed it. */
  closedBy?: string
  detail?: string
  history: Array<{ state: StoredState; at: number }>
}

/** The stored total (`cdb-books`, conservation.ts) of what entered the ledger from outside (operator credits). */
export interface CreditedTotal {
  /** Micro-tokens credited, all accounts together. */
  credited: Amount
  /** When the total was first written (the database's first start with it). */
  initialisedAt: number
  /** What it started from: 0 for a new database, the accounts' holdings for an older one. */
  initialisedWith: Amount
}
