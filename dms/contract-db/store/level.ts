/**
 * The level backend of the contract-db's storage port (port.ts): the embedded default, one
 * process. Tables are the `cdb-*` sublevels of dms/store/tables.ts; a transaction buffers its
 * writes and applies them in one atomic batch, and transactions run one at a time (a queue), so
 * each reads what the ones before it wrote. `cdb-due` indexes the active contracts by `watchFrom`
 * (deadlines.ts) for the expiry sweep; `cdb-listing` indexes every contract by `activatedAt`, all
 * and per state, and keeps the count per state, for the operator's pages (page.ts). An older
 * database gets both built at `open()`.
 */
import { SerialQueue } from '../../../actors/serial.js'
import type { Db, SubDb } from '../../store/db.js'
import { subOf } from '../../store/db.js'
import { STORES } from '../../store/tables.js'
import { watchFrom } from '../deadlines.js'
import type { Account, ApprovedEntity, ContractRecord, CreditedTotal, StoredState } from '../records.js'
import { checkPage, type ContractPageOf, type ContractPageQuery } from './page.js'
import type { BooksSnapshot, CdbReads, CdbTx, ContractDbStore, ContractQuery } from './port.js'
import { VolunteerTally, type ContractMove } from './volunteer-tally.js'

/** The key of the credited total in `cdb-books` (dms 0.2 stored it there). */
const CREDITED = 'credited'
/** The `cdb-due` key that says the index is complete (index keys start with a digit). */
const BUILT = 'built'
/** How many index entries an older database's build writes per batch. */
const BUILD_BATCH = 5000

/** A time as 16 digits (a safe integer has at most 16), so keys sort by time. */
const pad = (ms: number) =>
  String(Number.isSafeInteger(ms) && ms >= 0 ? ms : Number.MAX_SAFE_INTEGER).padStart(16, '0')
const dueKey = (rec: ContractRecord) => `${pad(watchFrom(rec))}!${rec.contract.terms.contractId}`
/** The listing of every contract: `*` sorts before the states' names, `#` (counts) before both. */
const ALL = '*'
/** A listing key: the listing (ALL or a state), the time, the id; pad gives 16 digits. */
const listKey = (list: string, at: number, id: string) => `${list}!${pad(at)}!${id}`
/** A contract's listing keys: in the listing of all, and in its state's. */
const listKeys = (rec: ContractRecord) => {
  const id = rec.contract.terms.contractId
  return [listKey(ALL, rec.activatedAt, id), listKey(rec.state, rec.activatedAt, id)]
}
/** The key of a state's count in `cdb-listing`. */
const countKey = (state: string) => `#${state}`
/** The `cdb-listing` key that says the index is complete. */
const LISTING_BUILT = '~built'

type Tables = { contracts: SubDb; accounts: SubDb; approved: SubDb; books: SubDb; due: SubDb; listing: SubDb }

type Op =
  { type: 'put'; sublevel: SubDb; key: string; value: string } | { type: 'del'; sublevel: SubDb; key: string }

export class LevelContractDbStore implements ContractDbStore {
  readonly backend = 'level' as const
  private readonly t: Tables
  private readonly queue = new SerialQueue()
  private opened?: Promise<void>
  /** Built at the first `activeVolunteers`, then moved by each commit. */
  private volunteers?: VolunteerTally

  constructor(private readonly db: Db) {
    this.t = {
      contracts: subOf(db, STORES.cdbContracts.name),
      accounts: subOf(db, STORES.cdbAccounts.name),
      approved: subOf(db, STORES.cdbApproved.name),
      books: subOf(db, STORES.cdbBooks.name),
      due: subOf(db, STORES.cdbDue.name),
      listing: subOf(db, STORES.cdbListing.name),
    }
  }

  open(): Promise<void> {
    // A failed open (a disk error) is tried again at the next call, not remembered.
    this.opened ??= this.queue
      .run(async () => {
        await this.buildDueIndex()
        await this.buildListing()
      })
      .catch((err: unknown) => {
        this.opened = undefined
        throw err
      })
    return this.opened
  }

  contract(id: string) {
    return read<ContractRecord>(this.t.contracts, id)
  }
  account(peer: string) {
    return read<Account>(this.t.accounts, peer)
  }
  approval(peer: string) {
    return read<ApprovedEntity>(this.t.approved, peer)
  }
  credited() {
    return read<CreditedTotal>(this.t.books, CREDITED)
  }

  transaction<T>(fn: (tx: CdbTx) => T | Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      const tx = new LevelTx(this, this.t)
      const out = await fn(tx)
      const ops = await tx.ops()
      if (ops.length > 0) await this.db.batch(ops as never)
      this.volunteers?.committed(tx.moved)
      return out
    })
  }

  /** Counted in the queue, so no transaction commits during the first count. */
  activeVolunteers(requester: string): Promise<number> {
    return this.queue.run(async () => {
      this.volunteers ??= new VolunteerTally(await this.contracts({ state: 'active' }))
      return this.volunteers.of(requester)
    })
  }

  /** Read in the queue: no transaction commits between the total and the accounts. */
  books(): Promise<BooksSnapshot> {
    return this.queue.run(async () => {
      const credited = await this.credited()
      let balances = 0
      let escrow = 0
      let accounts = 0
      for (const a of await this.accounts()) {
        balances += a.balance
        escrow += a.escrow
        accounts++
      }
      return { credited, balances, escrow, accounts }
    })
  }

  async dueBy(now: number): Promise<ContractRecord[]> {
    await this.open()
    const out: ContractRecord[] = []
    // '"' follows '!': every key of a time at or before `now`, whatever its contract id.
    for await (const key of this.t.due.keys({ lt: `${pad(now)}"` })) {
      const rec = await this.contract(key.slice(17))
      if (rec?.state === 'active') out.push(rec)
    }
    return out
  }

  async contracts(q: ContractQuery = {}): Promise<ContractRecord[]> {
    const out: ContractRecord[] = []
    const keep = (rec: ContractRecord) => {
      if (q.state !== undefined && rec.state !== q.state) return
      const t = rec.contract?.terms
      if (q.party !== undefined && t?.requester?.peer !== q.party && t?.provider?.peer !== q.party) return
      out.push(rec)
    }
    // One state: its listing, not every row (the active ones are few among the closed). Not
    // open() here: activeVolunteers lists inside the queue, where open() would wait on itself.
    if (q.state === undefined || (await this.t.listing.get(LISTING_BUILT)) === undefined) {
      for await (const v of this.t.contracts.values()) keep(JSON.parse(v) as ContractRecord)
      return out
    }
    const start = q.state.length + 18
    for await (const key of this.t.listing.keys({ gt: `${q.state}!`, lt: `${q.state}"` })) {
      const rec = await this.contract(key.slice(start))
      if (rec !== undefined) keep(rec)
    }
    return out
  }

  async page(q: ContractPageQuery): Promise<ContractPageOf<ContractRecord>> {
    checkPage(q)
    await this.open()
    const list = q.state ?? ALL
    const keys: string[] = []
    // One more key than asked says whether a next page exists.
    for await (const key of this.t.listing.keys({
      gt: `${list}!`,
      lt: q.after === undefined ? `${list}"` : listKey(list, q.after.activatedAt, q.after.id),
      reverse: true,
      limit: q.limit + 1,
    }))
      keys.push(key)
    const start = list.length + 1
    const page = keys.slice(0, q.limit)
    const contracts: ContractRecord[] = []
    for (const key of page) {
      const rec = await this.contract(key.slice(start + 17))
      if (rec !== undefined) contracts.push(rec)
    }
    const last = page.at(-1)
    if (keys.length <= q.limit || last === undefined) return { contracts }
    return {
      contracts,
      next: { activatedAt: Number(last.slice(start, start + 16)), id: last.slice(start + 17) },
    }
  }

  async countByState(): Promise<Partial<Record<StoredState, number>>> {
    await this.open()
    const out: Partial<Record<StoredState, number>> = {}
    for await (const [key, v] of this.t.listing.iterator({ gt: '#', lt: '$' }))
      if (Number(v) > 0) out[key.slice(1) as StoredState] = Number(v)
    return out
  }

  accounts() {
    return all<Account>(this.t.accounts)
  }
  approvals() {
    return all<ApprovedEntity>(this.t.approved)
  }

  /** A database from before the index (or whose build was cut short) gets it from its contracts. */
  private async buildDueIndex(): Promise<void> {
    if ((await this.t.due.get(BUILT)) !== undefined) return
    let ops: Op[] = []
    for await (const v of this.t.contracts.values()) {
      const rec = JSON.parse(v) as ContractRecord
      if (rec.state !== 'active') continue
      ops.push({ type: 'put', sublevel: this.t.due, key: dueKey(rec), value: '' })
      if (ops.length >= BUILD_BATCH) {
        await this.db.batch(ops as never)
        ops = []
      }
    }
    ops.push({ type: 'put', sublevel: this.t.due, key: BUILT, value: '1' })
    await this.db.batch(ops as never)
  }

  /** The listing of a database from before it, built from its contracts (again if cut short). */
  private async buildListing(): Promise<void> {
    if ((await this.t.listing.get(LISTING_BUILT)) !== undefined) return
    await this.t.listing.clear()
    const counts = new Map<string, number>()
    let ops: Op[] = []
    for await (const v of this.t.contracts.values()) {
      const rec = JSON.parse(v) as ContractRecord
      for (const key of listKeys(rec)) ops.push({ type: 'put', sublevel: this.t.listing, key, value: '' })
      counts.set(rec.state, (counts.get(rec.state) ?? 0) + 1)
      if (ops.length >= BUILD_BATCH) {
        await this.db.batch(ops as never)
        ops = []
      }
    }
    for (const [state, n] of counts)
      ops.push({ type: 'put', sublevel: this.t.listing, key: countKey(state), value: String(n) })
    ops.push({ type: 'put', sublevel: this.t.listing, key: LISTING_BUILT, value: '1' })
    await this.db.batch(ops as never)
  }
}

/** A transaction's writes, kept until it commits; its reads see them first. */
class LevelTx implements CdbTx {
  private readonly writes = new Map<string, { sublevel: SubDb; key: string; value?: unknown }>()
  /** The contracts written, with the record each had before (its index entry to remove). */
  private readonly before = new Map<string, ContractRecord | undefined>()
  /** Each contract written, before and after: set by `ops()`. */
  moved: ContractMove[] = []

  constructor(
    private readonly base: CdbReads,
    private readonly t: Tables,
  ) {}

  async contract(id: string) {
    return this.pending<ContractRecord>(this.t.contracts, id) ?? (await this.base.contract(id))
  }
  async account(peer: string) {
    return this.pending<Account>(this.t.accounts, peer) ?? (await this.base.account(peer))
  }
  async approval(peer: string) {
    const w = this.writes.get(slot(this.t.approved, peer))
    if (w !== undefined) return w.value as ApprovedEntity | undefined
    return this.base.approval(peer)
  }
  async credited() {
    return this.pending<CreditedTotal>(this.t.books, CREDITED) ?? (await this.base.credited())
  }

  putContract(rec: ContractRecord): void {
    const id = rec.contract.terms.contractId
    if (!this.before.has(id)) this.before.set(id, undefined)
    this.set(this.t.contracts, id, rec)
  }
  putAccount(acc: Account): void {
    this.set(this.t.accounts, acc.peer, acc)
  }
  putApproval(e: ApprovedEntity): void {
    this.set(this.t.approved, e.peer, e)
  }
  delApproval(peer: string): void {
    this.writes.set(slot(this.t.approved, peer), { sublevel: this.t.approved, key: peer })
  }
  putCredited(total: CreditedTotal): void {
    this.set(this.t.books, CREDITED, total)
  }

  /** The batch: every write, and for each contract written its index entries moved and its state counted. */
  async ops(): Promise<Op[]> {
    const ops: Op[] = []
    for (const w of this.writes.values())
      ops.push(
        w.value === undefined
          ? { type: 'del', sublevel: w.sublevel, key: w.key }
          : { type: 'put', sublevel: w.sublevel, key: w.key, value: JSON.stringify(w.value) },
      )
    const counted = new Map<string, number>()
    for (const id of this.before.keys()) {
      const old = await this.base.contract(id)
      const now = this.pending<ContractRecord>(this.t.contracts, id)!
      this.moved.push({ old, now })
      const from = old?.state === 'active' ? dueKey(old) : undefined
      const to = now.state === 'active' ? dueKey(now) : undefined
      if (from !== to) {
        if (from !== undefined) ops.push({ type: 'del', sublevel: this.t.due, key: from })
        if (to !== undefined) ops.push({ type: 'put', sublevel: this.t.due, key: to, value: '' })
      }
      const oldKeys = old === undefined ? [] : listKeys(old)
      const newKeys = listKeys(now)
      for (const key of oldKeys)
        if (!newKeys.includes(key)) ops.push({ type: 'del', sublevel: this.t.listing, key })
      for (const key of newKeys)
        if (!oldKeys.includes(key)) ops.push({ type: 'put', sublevel: this.t.listing, key, value: '' })
      if (old?.state === now.state) continue
      if (old !== undefined) counted.set(old.state, (counted.get(old.state) ?? 0) - 1)
      counted.set(now.state, (counted.get(now.state) ?? 0) + 1)
    }
    for (const [state, by] of counted) {
      if (by === 0) continue
      const n = Number((await this.t.listing.get(countKey(state))) ?? 0) + by
      ops.push({ type: 'put', sublevel: this.t.listing, key: countKey(state), value: String(n) })
    }
    return ops
  }

  private pending<T>(sub: SubDb, key: string): T | undefined {
    return this.writes.get(slot(sub, key))?.value as T | undefined
  }
  private set(sublevel: SubDb, key: string, value: unknown): void {
    // A copy: the caller may change its object after the write, and the write must not move.
    this.writes.set(slot(sublevel, key), { sublevel, key, value: structuredClone(value) })
  }
}

const slot = (sub: SubDb, key: string) => `${sub.prefix}${key}`

async function read<T>(sub: SubDb, key: string): Promise<T | undefined> {
  const v = await sub.get(key)
  return v === undefined ? undefined : (JSON.parse(v) as T)
}

async function all<T>(sub: SubDb): Promise<T[]> {
  const out: T[] = []
  for await (const v of sub.values()) out.push(JSON.parse(v) as T)
  return out
}
