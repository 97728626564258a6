/**
 * The contract-db's storage port: what its service, handlers, sweeps and operator API read and
 * write, whatever holds it (specs/contract-db.md, "Storage backends"). Backends: level (level.ts,
 * the embedded default). Every backend passes test/helpers/cdb-store-compliance.ts.
 */
import type { Account, ApprovedEntity, ContractRecord, CreditedTotal, StoredState } from '../records.js'
import type { ContractPageOf, ContractPageQuery } from './page.js'

/** Which backend holds the books (metrics and `/v1/info` say it). */
export type StoreBackend = 'level' | 'postgres'

/** Point reads by key: the same inside a transaction and outside one. */
export interface CdbReads {
  contract(id: string): Promise<ContractRecord | undefined>
  /** A peer's account; undefined for a peer that never held money. */
  account(peer: string): Promise<Account | undefined>
  approval(peer: string): Promise<ApprovedEntity | undefined>
  /** The credited total (conservation.ts); undefined in a new database or one from before it. */
  credited(): Promise<CreditedTotal | undefined>
}

/**
 * One transaction: its reads see its own writes, and its writes are applied together or not at
 * all when the function it was given returns (rejects: nothing is written).
 */
export interface CdbTx extends CdbReads {
  /** Writes a contract's record; the backend keeps its indexes (state, parties, due) with it. */
  putContract(rec: ContractRecord): void
  putAccount(acc: Account): void
  putApproval(e: ApprovedEntity): void
  delApproval(peer: string): void
  putCredited(total: CreditedTotal): void
}

/** What a contract listing selects (all given: all must hold). */
export interface ContractQuery {
  state?: StoredState
  /** A requester or provider peer id. */
  party?: string
}

/** The credited total and what the accounts hold, read in one snapshot (`ContractDbStore.books`). */
export interface BooksSnapshot {
  /** Undefined in a new database or one from before the total. */
  credited: CreditedTotal | undefined
  /** Every account's balance, summed. */
  balances: number
  /** Every account's escrow, summed. */
  escrow: number
  /** How many accounts. */
  accounts: number
}

export interface ContractDbStore extends CdbReads {
  readonly backend: StoreBackend
  /** Opens the books: builds an index an older database lacks. Idempotent. */
  open(): Promise<void>
  /**
   * Runs `fn` in one transaction and resolves with its result. Transactions are serializable:
   * a backend that can run two at once retries `fn` on a conflict, so `fn` must have no effect
   * outside `tx` (it may run more than once).
   */
  transaction<T>(fn: (tx: CdbTx) => T | Promise<T>): Promise<T>
  /**
   * The active contracts whose `watchFrom` (deadlines.ts) is at or before `now`: every contract
   * the expiry sweep may have to expire, and no other (read through an index, not every row).
   */
  dueBy(now: number): Promise<ContractRecord[]>
  contracts(q?: ContractQuery): Promise<ContractRecord[]>
  /**
   * One page of the contracts, newest first (`activatedAt` then id, descending; page.ts): at
   * most `limit` records read through an index, whatever the number stored. A limit past
   * MAX_PAGE, or a malformed cursor, is refused (BAD_LIMIT, BAD_CURSOR) before any read.
   */
  page(q: ContractPageQuery): Promise<ContractPageOf<ContractRecord>>
  /** How many contracts are stored in each state (states with none are absent). */
  countByState(): Promise<Partial<Record<StoredState, number>>>
  accounts(): Promise<Account[]>
  approvals(): Promise<ApprovedEntity[]>
  /**
   * The conservation check's reads in one snapshot: no write by this or another instance lands
   * between the credited total and the accounts (conservation.ts).
   */
  books(): Promise<BooksSnapshot>
  /**
   * How many volunteer contracts (escrow 0) of `requester` are active, counted from the stored
   * contracts, so that every instance over the books counts the same (verify, check 10).
   */
  activeVolunteers(requester: string): Promise<number>
}
