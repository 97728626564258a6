/**
 * Copies a contract-db's books from one store into another, empty one, then checks them
 * (specs/contract-db.md, "Migrating from level to PostgreSQL"): approvals, accounts, the credited
 * total and every contract, in transactions of at most `batch` records, read from the source a
 * page at a time (never all at once). The source is only read. The check reads both stores again:
 * every account's balance and escrow, every contract's state and money, the counts by state, the
 * credited total. The caller owns both stores; on a failure it empties the target (`clear`).
 */
import { DmsError } from '../../../actors/errors.js'
import type { StoredState } from '../records.js'
import { MAX_PAGE, type ContractCursor } from './page.js'
import type { ContractDbStore } from './port.js'

/** How far a copy or its check has come (for the CLI's progress line). */
export interface MigrateProgress {
  phase: 'copy' | 'check'
  /** Contracts done so far. */
  contracts: number
  /** Contracts in the source (its counts by state, summed). */
  total: number
}

/** The figures of a migration, read from each store after the copy. */
export interface BooksFigures {
  contracts: Partial<Record<StoredState, number>>
  accounts: number
  approvals: number
  /** The credited total; null when the source had none (a database from before it). */
  credited: number | null
  balances: number
  escrow: number
}

export interface MigrateReport {
  source: BooksFigures
  target: BooksFigures
  /** Milliseconds the copy and the check took. */
  tookMs: number
}

/** The target holds books already: a migration never merges. */
export class TargetNotEmptyError extends DmsError<{ what: string }> {
  constructor(what: string) {
    super(
      'TARGET_NOT_EMPTY',
      `the target database already holds contract-db books (${what}): migrate into an empty schema`,
      { what },
    )
  }
}

/** The source holds no books: nothing to migrate (a wrong --data-dir?). */
export class SourceEmptyError extends DmsError {
  constructor() {
    super('SOURCE_EMPTY', 'the source holds no contract-db books (no account, contract or approval)')
  }
}

/** After the copy, the target's books differ from the source's: listed, at most 10. */
export class BooksMismatchError extends DmsError<{ differences: string[] }> {
  constructor(differences: string[]) {
    super(
      'BOOKS_MISMATCH',
      `the copy's books differ from the source's: ${differences.slice(0, 10).join('; ')}${differences.length > 10 ? `; and ${differences.length - 10} more` : ''}`,
      { differences },
    )
  }
}

/**
 * Copies `from` into `to` (both opened by the caller) and checks the copy: resolves with the
 * figures of both, or rejects (TargetNotEmptyError, SourceEmptyError, BooksMismatchError, or a
 * store's own error). `from` is only read.
 */
export async function migrateBooks(
  from: ContractDbStore,
  to: ContractDbStore,
  opts: { batch?: number; onProgress?: (p: MigrateProgress) => void; now?: () => number } = {},
): Promise<MigrateReport> {
  const batch = Math.min(opts.batch ?? 500, MAX_PAGE)
  const now = opts.now ?? Date.now
  const started = now()
  await refuseNonEmpty(to)
  const counts = await from.countByState()
  const total = sum(Object.values(counts))
  const accounts = await from.accounts()
  const approvals = await from.approvals()
  const credited = await from.credited()
  if (total === 0 && accounts.length === 0 && approvals.length === 0) throw new SourceEmptyError()

  for (let i = 0; i < approvals.length; i += batch)
    await to.transaction((tx) => approvals.slice(i, i + batch).forEach((a) => tx.putApproval(a)))
  for (let i = 0; i < accounts.length; i += batch)
    await to.transaction((tx) => accounts.slice(i, i + batch).forEach((a) => tx.putAccount(a)))
  let copied = 0
  await eachPage(from, batch, async (recs) => {
    await to.transaction((tx) => recs.forEach((r) => tx.putContract(r)))
    copied += recs.length
    opts.onProgress?.({ phase: 'copy', contracts: copied, total })
  })
  // Last: a credited total in the target says the copy finished.
  if (credited !== undefined) await to.transaction((tx) => tx.putCredited(credited))

  const differences = await compare(from, to, batch, (n) =>
    opts.onProgress?.({ phase: 'check', contracts: n, total }),
  )
  if (differences.length > 0) throw new BooksMismatchError(differences)
  return { source: await figures(from), target: await figures(to), tookMs: now() - started }
}

async function refuseNonEmpty(to: ContractDbStore): Promise<void> {
  if ((await to.page({ limit: 1 })).contracts.length > 0) throw new TargetNotEmptyError('contracts')
  if ((await to.accounts()).length > 0) throw new TargetNotEmptyError('accounts')
  if ((await to.approvals()).length > 0) throw new TargetNotEmptyError('approvals')
  if ((await to.credited()) !== undefined) throw new TargetNotEmptyError('a credited total')
}

/** Calls `fn` with each page of `store`'s contracts, newest first, until the last. */
async function eachPage(
  store: ContractDbStore,
  limit: number,
  fn: (recs: Awaited<ReturnType<ContractDbStore['page']>>['contracts']) => Promise<void>,
): Promise<void> {
  let after: ContractCursor | undefined
  do {
    const page = await store.page({ limit, ...(after !== undefined ? { after } : {}) })
    if (page.contracts.length > 0) await fn(page.contracts)
    after = page.next
  } while (after !== undefined)
}

/** Every difference between the two stores' books (empty: they match). */
async function compare(
  from: ContractDbStore,
  to: ContractDbStore,
  limit: number,
  progress: (n: number) => void,
): Promise<string[]> {
  const out: string[] = []
  const theirs = new Map((await to.accounts()).map((a) => [a.peer, a]))
  for (const a of await from.accounts()) {
    const b = theirs.get(a.peer)
    if (b === undefined) out.push(`account ${a.peer} missing`)
    else if (b.balance !== a.balance || b.escrow !== a.escrow)
      out.push(`account ${a.peer}: balance ${b.balance} escrow ${b.escrow}, not ${a.balance} and ${a.escrow}`)
    theirs.delete(a.peer)
  }
  for (const peer of theirs.keys()) out.push(`account ${peer} not in the source`)
  const approved = new Set((await to.approvals()).map((a) => a.peer))
  for (const a of await from.approvals()) if (!approved.has(a.peer)) out.push(`approval of ${a.peer} missing`)
  const [c1, c2] = [await from.credited(), await to.credited()]
  if (c1?.credited !== c2?.credited) out.push(`credited ${c2?.credited}, not ${c1?.credited}`)
  const [s1, s2] = [await from.countByState(), await to.countByState()]
  for (const state of new Set([...Object.keys(s1), ...Object.keys(s2)]) as Set<StoredState>)
    if (s1[state] !== s2[state]) out.push(`${s2[state] ?? 0} ${state} contracts, not ${s1[state] ?? 0}`)
  // Both listings are in one order (byte order of ids): walked side by side.
  let checked = 0
  let after: ContractCursor | undefined
  do {
    const q = { limit, ...(after !== undefined ? { after } : {}) }
    const [a, b] = [await from.page(q), await to.page(q)]
    a.contracts.forEach((r, i) => {
      const id = r.contract.terms.contractId
      const c = b.contracts[i]
      if (c?.contract.terms.contractId !== id) out.push(`contract ${id} missing or out of order`)
      else if (moneyOf(c) !== moneyOf(r)) out.push(`contract ${id}: ${moneyOf(c)}, not ${moneyOf(r)}`)
    })
    checked += a.contracts.length
    progress(checked)
    after = a.next
  } while (after !== undefined && out.length < 100)
  return out
}

type Rec = Awaited<ReturnType<ContractDbStore['page']>>['contracts'][number]
/** What the check compares of a contract: its state, escrow and settlement, as one line. */
const moneyOf = (r: Rec) =>
  `${r.state} escrow ${r.contract.terms.escrow} paid ${r.settlement?.paidToProvider ?? '-'} refunded ${r.settlement?.refundedToRequester ?? '-'} history ${r.history.length}`

async function figures(store: ContractDbStore): Promise<BooksFigures> {
  const accounts = await store.accounts()
  return {
    contracts: await store.countByState(),
    accounts: accounts.length,
    approvals: (await store.approvals()).length,
    credited: (await store.credited())?.credited ?? null,
    balances: sum(accounts.map((a) => a.balance)),
    escrow: sum(accounts.map((a) => a.escrow)),
  }
}

const sum = (xs: Array<number | undefined>) => xs.reduce<number>((s, x) => s + (x ?? 0), 0)
