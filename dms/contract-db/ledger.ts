/**
 * The money ledger: accounts, and the moves a contract's transitions make on them. Spec:
 * specs/contract-db.md ("Money", "Accounts and approvals").
 *
 * Invariants, checked on every write (a write that would break one is not made):
 *  - every balance and escrow is an amount (a safe integer ≥ 0);
 *  - a contract's moves create and destroy no money: their balance and escrow deltas sum to 0.
 *    Only an operator's credit adds money.
 * Each write is one atomic batch: the moves of a contract go in the batch of its record.
 */
import { DmsError } from '../../actors/errors.js'
import type { Logger } from 'pino'
import { REFUSAL, refuse } from '../contracts/errors.js'
import type { ContractTerms } from '../contracts/model.js'
import { InvalidAmountError, isAmount, type Amount } from '../contracts/money.js'
import { publicKeyOfPeer } from '../contracts/party.js'
import type { Account } from './records.js'
import type { CdbReads, CdbTx } from './store/port.js'

/** A change of one account, in micro-tokens (deltas: negative takes away). */
export interface Move {
  peer: string
  balance: number
  escrow: number
}

/** A write that would break an invariant of the ledger: nothing was written. */
export class LedgerError extends DmsError {
  constructor(message: string) {
    super('LEDGER_INVARIANT', message)
  }
}

/** Locking a contract's escrow: the requester's balance goes into its escrow (none for 0). */
export function lockMoves(t: ContractTerms): Move[] {
  if (t.escrow === 0) return []
  return [{ peer: t.requester.peer, balance: -t.escrow, escrow: t.escrow }]
}

/**
 * Closing a contract: its whole escrow leaves the requester's escrow, `paid` goes to the provider
 * and the rest back to the requester's balance (the same peer on both sides gets it all back).
 */
export function closeMoves(t: ContractTerms, paid: Amount): Move[] {
  if (t.escrow === 0) return []
  return [
    { peer: t.requester.peer, balance: t.escrow - paid, escrow: -t.escrow },
    { peer: t.provider.peer, balance: paid, escrow: 0 },
  ]
}

const zero = (peer: string): Account => ({ peer, balance: 0, escrow: 0 })

/**
 * The accounts after `moves` (merged per peer, in the order the peers first appear), read from
 * `current`. Throws LedgerError when the moves do not sum to zero or leave an account negative.
 */
export function applyMoves(current: ReadonlyMap<string, Account>, moves: readonly Move[]): Account[] {
  let sum = 0
  const next = new Map<string, Account>()
  for (const m of moves) {
    if (!Number.isSafeInteger(m.balance) || !Number.isSafeInteger(m.escrow))
      throw new LedgerError(`a move of ${m.peer} is not whole micro-tokens`)
    sum += m.balance + m.escrow
    const acc = next.get(m.peer) ?? current.get(m.peer) ?? zero(m.peer)
    next.set(m.peer, { ...acc, balance: acc.balance + m.balance, escrow: acc.escrow + m.escrow })
  }
  if (sum !== 0) throw new LedgerError(`the moves create or destroy ${sum} micro-tokens`)
  for (const acc of next.values())
    if (!isAmount(acc.balance) || !isAmount(acc.escrow))
      throw new LedgerError(`account ${acc.peer} would hold balance ${acc.balance}, escrow ${acc.escrow}`)
  return [...next.values()]
}

/** The accounts, over the contract-db's store (store/port.ts). */
export class Accounts {
  constructor(
    private readonly store: Pick<CdbReads, 'account'> & { accounts(): Promise<Account[]> },
    private readonly log: Logger,
  ) {}

  /** The peer's account; an unknown peer reads as zeros. */
  async get(peer: string): Promise<Account> {
    return (await this.store.account(peer)) ?? zero(peer)
  }

  list(): Promise<Account[]> {
    return this.store.accounts()
  }

  /** Applies `moves` in `tx` (checked as `applyMoves` does: a refused move writes nothing). */
  async apply(tx: CdbTx, moves: readonly Move[]): Promise<void> {
    const current = new Map<string, Account>()
    for (const m of moves)
      if (!current.has(m.peer)) current.set(m.peer, (await tx.account(m.peer)) ?? zero(m.peer))
    for (const acc of applyMoves(current, moves)) tx.putAccount(acc)
  }

  /**
   * Adds `amount` (> 0) to the peer's balance in `tx`: the only way money enters the ledger. The
   * caller adds it to the credited total in the same transaction (conservation.ts).
   */
  async credit(tx: CdbTx, peer: string, amount: Amount): Promise<Account> {
    if (!isAmount(amount) || amount === 0) throw new InvalidAmountError('a credit (> 0)', amount)
    if (publicKeyOfPeer(peer) === undefined)
      throw refuse(REFUSAL.badPeerId, `${peer} is not an Ed25519 peer id`)
    const acc = (await tx.account(peer)) ?? zero(peer)
    const next = { ...acc, balance: acc.balance + amount }
    if (!isAmount(next.balance)) throw new InvalidAmountError('the resulting balance', next.balance)
    tx.putAccount(next)
    return next
  }

  /** Logs a credit once written. */
  credited(peer: string, amount: Amount): void {
    this.log.info({ peer, amount }, 'account credited')
  }
}
