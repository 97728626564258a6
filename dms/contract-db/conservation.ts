/**
 * The conservation check (specs/contract-db.md, "Conservation"): everything credited from outside
 * equals what the accounts hold, balances plus escrow. Contracts only move money between accounts
 * (ledger.ts), so the two differ only if the books are broken.
 *
 * The credited total is stored (sublevel `cdb-books`, key `credited`) and written in the same
 * batch as each credit. A database from before it had none: at its first start the total is
 * initialised from the balances and escrow it holds (`initialisedAt`), and conservation is checked
 * from then on.
 */
import type { Amount } from '../contracts/money.js'
import type { BooksSnapshot, CdbReads, CdbTx } from './store/port.js'
import type { Account, CreditedTotal } from './records.js'

export type { CreditedTotal } from './records.js'

/** The check, as the operator's page shows it. */
export interface Conservation {
  credited: Amount
  balances: Amount
  escrow: Amount
  /** balances + escrow − credited: 0 when the books add up. */
  difference: number
  ok: boolean
  /** Checked since (the total's `initialisedAt`). */
  since: number
  initialisedWith: Amount
  accounts: number
}

/** What the accounts hold, balances and escrow summed. */
export function holdings(accounts: readonly Account[]): { balances: number; escrow: number } {
  let balances = 0
  let escrow = 0
  for (const a of accounts) {
    balances += a.balance
    escrow += a.escrow
  }
  return { balances, escrow }
}

/** The check of what the accounts hold (a `BooksSnapshot`'s sums) against `total`. */
export function conservationOf(total: CreditedTotal, held: Omit<BooksSnapshot, 'credited'>): Conservation {
  const { balances, escrow } = held
  const difference = balances + escrow - total.credited
  return {
    credited: total.credited,
    balances,
    escrow,
    difference,
    ok: difference === 0,
    since: total.initialisedAt,
    initialisedWith: total.initialisedWith,
    accounts: held.accounts,
  }
}

/** The credited total. Callers serialise its reads and writes with the accounts' (the service's queue). */
export class CreditedBook {
  constructor(private readonly now: () => number) {}

  /**
   * The stored total, or (none stored: a new database, or one from before the total) a first one
   * from what the accounts hold now, with `fresh` set: the caller writes it (`put`).
   */
  async current(
    reads: Pick<CdbReads, 'credited'>,
    accounts: () => Promise<Account[]>,
  ): Promise<{ total: CreditedTotal; fresh: boolean }> {
    const stored = await reads.credited()
    if (stored !== undefined) return { total: stored, fresh: false }
    const { balances, escrow } = holdings(await accounts())
    const held = balances + escrow
    return { total: { credited: held, initialisedAt: this.now(), initialisedWith: held }, fresh: true }
  }

  /**
   * The total a snapshot holds and the snapshot: none stored yet (an older database, before
   * `openBooks`), the first one is taken from what the accounts hold, as `current` does.
   */
  of(snap: BooksSnapshot): [CreditedTotal, BooksSnapshot] {
    if (snap.credited !== undefined) return [snap.credited, snap]
    const held = snap.balances + snap.escrow
    return [{ credited: held, initialisedAt: this.now(), initialisedWith: held }, snap]
  }

  /** The total after a credit of `amount`. */
  static plus(total: CreditedTotal, amount: Amount): CreditedTotal {
    return { ...total, credited: total.credited + amount }
  }

  put(tx: CdbTx, total: CreditedTotal): void {
    tx.putCredited(total)
  }
}
