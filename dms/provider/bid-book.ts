/**
 * The provider's bids: one bid machine per live bid, each snapshot written in order (a serial
 * queue per bid), restored at start, and the look-ups the handlers need, kept from the machines'
 * own snapshots: open bids by job, what each requester holds, bids by contract id. Ended bids
 * leave memory (their records stay for a bounded time and number: `prune`).
 * Spec: specs/state-machines.md ("Provider bid and allocation").
 */
import type { Logger } from 'pino'
import { createActor, waitFor, type Actor as XActor, type SnapshotFrom } from 'xstate'
import type { Clock } from '../../actors/clock.js'
import { SerialQueue } from '../../actors/serial.js'
import type { Bid } from '../contracts/model.js'
import { sum } from '../resources/math.js'
import type { Resources } from '../resources/types.js'
import type { Db } from '../store/db.js'
import { STORES } from '../store/tables.js'
import { allocationState, HOLDING, type BidContext, type BidState, type HistoryEntry } from './bid-context.js'
import type { BidMachine } from './bid-machine.js'
import { bidRepo, flatState, prunable, type RetentionInit, type StoredBid } from './bid-store.js'
import { overShare } from './requester-cap.js'

/** The states a reserved bid ends through (released once its reservation is freed). */
const ENDING_FROM_RESERVED: ReadonlySet<BidState> = new Set(['withdrawn', 'expired'])

export type BidActor = XActor<BidMachine>
export type BidSnapshot = SnapshotFrom<BidMachine>

/** A stored transition: the record as written and the history entries it added. */
export type TransitionListener = (rec: StoredBid, added: HistoryEntry[]) => void

interface Live {
  actor: BidActor
  writes: SerialQueue
  dirty: boolean
  /** History entries already reported to listeners. */
  reported: number
  state: BidState
  requester: string
  jobId: string
}

/** What stays in memory of an ended bid until its record is pruned. */
interface Ended {
  at: number
  requester: string
  contractId?: string
  allocated: boolean
}

export interface BidBookComponents {
  db: Db
  clock: Clock
  log: Logger
  /** The bid machine with its actors provided. */
  machine: BidMachine
}

export class BidBook {
  private readonly repo
  private readonly live = new Map<string, Live>()
  /** Ended bids, oldest first (for pruning and for cancels of contracts that ended). */
  private readonly ended = new Map<string, Ended>()
  private readonly byContract = new Map<string, string>()
  /** Open bids by requester and job (`<requester> <jobId>`). */
  private readonly open = new Map<string, string>()
  private readonly holding = new Map<string, Set<string>>()
  private readonly listeners = new Set<TransitionListener>()
  private readonly pruneListeners = new Set<(bidId: string, allocated: boolean) => void>()

  constructor(
    private readonly c: BidBookComponents,
    private readonly init: RetentionInit = {},
  ) {
    this.repo = bidRepo(c.db)
  }

  /** Restores every stored bid: an ended one is only indexed, a live one goes on where it was. */
  async start(): Promise<void> {
    const records = (await this.repo.values()).sort((a, b) => a.at - b.at)
    for (const rec of records) {
      const ctx = rec.snapshot.context
      if (rec.state === 'released') this.remember(rec.bidId, ctx, rec.at)
      else this.run({ ...ctx, resume: rec.state })
    }
  }

  /** Stops every machine (their stored state stays where it is) once their writes are done. */
  async stop(): Promise<void> {
    for (const l of this.live.values()) l.actor.stop()
    await Promise.all([...this.live.values()].map((l) => l.writes.idle()))
    this.live.clear()
  }

  /** Calls `fn` after each stored transition; returns the unsubscribe function. */
  onTransition(fn: TransitionListener): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  /** Calls `fn` for each ended bid whose record is pruned; returns the unsubscribe function. */
  onPrune(fn: (bidId: string, allocated: boolean) => void): () => void {
    this.pruneListeners.add(fn)
    return () => this.pruneListeners.delete(fn)
  }

  /** Starts the machine of a new bid (in `reserved`); resolves once its first state is stored. */
  async create(context: BidContext): Promise<BidActor> {
    const actor = this.run(context)
    await this.persisted(context.bid.bidId)
    return actor
  }

  /** The machine of a live bid. */
  actor(bidId: string): BidActor | undefined {
    return this.live.get(bidId)?.actor
  }

  /** Resolves once every snapshot of the bid so far is stored. */
  async persisted(bidId: string): Promise<void> {
    await this.live.get(bidId)?.writes.idle()
  }

  /** Resolves with the first snapshot (now or later) that satisfies `until`, or the final one. */
  async settle(actor: BidActor, until: (s: BidSnapshot) => boolean): Promise<BidSnapshot> {
    return waitFor(actor, (s) => s.status !== 'active' || until(s))
  }

  /** The stored record of a bid: live (its current snapshot) or ended. */
  async get(bidId: string): Promise<StoredBid | undefined> {
    const l = this.live.get(bidId)
    if (l !== undefined) return this.recordOf(bidId, l.actor.getSnapshot())
    return this.repo.get(bidId)
  }

  /** Every stored bid, live or ended (a read of the whole sublevel, bounded by the pruning). */
  async values(): Promise<StoredBid[]> {
    return this.repo.values()
  }

  /** The open (reserved, unexpired) bid of `requester` for `jobId`, to send again. */
  openBid(jobId: string, requester: string): Bid | undefined {
    const l = this.live.get(this.open.get(`${requester} ${jobId}`) ?? '')
    if (l === undefined || l.state !== 'reserved' || l.requester !== requester) return undefined
    const bid = l.actor.getSnapshot().context.bid
    return bid.expiresAt > this.c.clock.now() ? bid : undefined
  }

  /**
   * What `requester` holds here: the resources of its bids not yet invoked (reserved, locked, or
   * contracted and waiting for their invocation).
   */
  holdings(requester: string): Resources[] {
    const now = this.c.clock.now()
    return [...(this.holding.get(requester) ?? [])].flatMap((id) => {
      const l = this.live.get(id)
      const ctx = l?.actor.getSnapshot().context
      if (ctx === undefined || (l!.state === 'reserved' && ctx.bid.expiresAt <= now)) return []
      return [ctx.held]
    })
  }

  /**
   * The reserved (not locked), unexpired bids of requesters other than `except` whose bids not
   * yet invoked add up to more than `limit` in some resource, oldest first: the reservations
   * another requester may take over (requester-cap.ts, `toPreempt`).
   */
  reservedOver(limit: Resources, except: string): Array<{ bidId: string; held: Resources }> {
    const now = this.c.clock.now()
    const out: Array<{ bidId: string; held: Resources; at: number }> = []
    for (const [requester, ids] of this.holding) {
      if (requester === except || !overShare(sum(this.holdings(requester)), limit)) continue
      for (const id of ids) {
        const l = this.live.get(id)
        const ctx = l?.actor.getSnapshot().context
        if (l?.state === 'reserved' && ctx !== undefined && ctx.bid.expiresAt > now)
          out.push({ bidId: id, held: ctx.held, at: ctx.history[0]?.at ?? 0 })
      }
    }
    return out.sort((a, b) => a.at - b.at).map(({ bidId, held }) => ({ bidId, held }))
  }

  /** The bid of a contract (live or ended, until pruned), with its requester's peer id. */
  byContractId(contractId: string): { bidId: string; requester: string; live?: BidActor } | undefined {
    const bidId = this.byContract.get(contractId)
    if (bidId === undefined) return undefined
    const l = this.live.get(bidId)
    const requester = l?.requester ?? this.ended.get(bidId)?.requester
    return requester === undefined ? undefined : { bidId, requester, live: l?.actor }
  }

  /** Allocations by state (live and ended), counted from memory. */
  allocationStates(): Record<string, number> {
    const out: Record<string, number> = {}
    const add = (s: string) => (out[s] = (out[s] ?? 0) + 1)
    for (const l of this.live.values())
      if (l.actor.getSnapshot().context.allocation !== undefined) add(allocationState(l.state))
    for (const e of this.ended.values()) if (e.allocated) add('released')
    return out
  }

  /** Machines running now. */
  get size(): number {
    return this.live.size
  }

  /** Live bids whose state is one of `states`. */
  inStates(states: ReadonlySet<BidState>): BidActor[] {
    return [...this.live.values()].filter((l) => states.has(l.state)).map((l) => l.actor)
  }

  /** Deletes the records of ended bids past their retention; returns how many. */
  async prune(): Promise<number> {
    const due = prunable(
      [...this.ended].map(([bidId, e]) => ({ bidId, at: e.at })),
      this.c.clock.now(),
      this.init,
    )
    if (due.length === 0) return 0
    await this.c.db.batch(due.map((id) => this.repo.delOp(id)))
    for (const id of due) {
      const e = this.ended.get(id)
      if (e?.contractId !== undefined && this.byContract.get(e.contractId) === id)
        this.byContract.delete(e.contractId)
      this.ended.delete(id)
      for (const fn of this.pruneListeners) fn(id, e?.allocated === true)
    }
    return due.length
  }

  private run(context: BidContext): BidActor {
    const bidId = context.bid.bidId
    const actor = createActor(this.c.machine, { input: { context }, clock: this.c.clock })
    const l: Live = {
      actor,
      writes: new SerialQueue(),
      dirty: false,
      reported: context.history.length,
      state: 'reserved',
      requester: context.requester.peer,
      jobId: context.bid.jobId,
    }
    this.live.set(bidId, l)
    actor.subscribe({
      next: (snap) => this.observe(bidId, l, snap),
      error: (err) => this.c.log.error({ err, bidId }, 'bid machine failed'),
    })
    actor.start()
    return actor
  }

  /** Keeps the look-ups in step with the machine and queues the write of its snapshot. */
  private observe(bidId: string, l: Live, snap: BidSnapshot): void {
    const state = flatState(snap.value)
    const ctx = snap.context
    const prev = l.state
    l.state = state
    if (ctx.contractId !== undefined) this.byContract.set(ctx.contractId, bidId)
    const job = `${l.requester} ${l.jobId}`
    if (state === 'reserved') this.open.set(job, bidId)
    else if (this.open.get(job) === bidId) this.open.delete(job)
    const held = this.holding.get(l.requester) ?? new Set<string>()
    if (HOLDING.has(state)) this.holding.set(l.requester, held.add(bidId))
    else if (held.delete(bidId) && held.size === 0) this.holding.delete(l.requester)
    // A reserved bid given up or expired is released within one ledger write; its record is
    // written once, released, not also in between (a crash in between leaves it stored reserved:
    // restored, it expires at its deadline and is released then, the same end).
    if (prev === 'reserved' && ENDING_FROM_RESERVED.has(state)) return
    // `locking` lasts one ledger write and adds nothing to the history: the state it ends in
    // (locked, or contracted for a folded lock) is written instead. A crash during it leaves the
    // bid stored reserved: restored, it expires unlocked and its ledger entry is released.
    if (state === 'locking') return
    if (l.dirty) return
    l.dirty = true
    // Coalesced: the write stores the newest snapshot at the time it runs.
    void l.writes
      .run(() => this.write(bidId, l))
      .catch((err: unknown) => {
        this.c.log.error({ err, bidId }, 'could not store a bid')
      })
  }

  private async write(bidId: string, l: Live): Promise<void> {
    l.dirty = false
    const snap = l.actor.getSnapshot()
    const rec = this.recordOf(bidId, snap)
    await this.repo.put(bidId, rec)
    const history = rec.snapshot.context.history
    const added = history.slice(l.reported)
    l.reported = history.length
    for (const fn of this.listeners) {
      try {
        fn(rec, added)
      } catch (err) {
        this.c.log.warn({ err, bidId }, 'transition listener threw')
      }
    }
    if (snap.status === 'done' && !l.dirty && this.live.get(bidId) === l) {
      this.live.delete(bidId)
      l.actor.stop()
      this.remember(bidId, rec.snapshot.context, rec.at)
    }
  }

  private remember(bidId: string, ctx: BidContext, at: number): void {
    this.ended.delete(bidId)
    this.ended.set(bidId, {
      at,
      requester: ctx.requester.peer,
      contractId: ctx.contractId,
      allocated: ctx.allocation !== undefined,
    })
    if (ctx.contractId !== undefined) this.byContract.set(ctx.contractId, bidId)
  }

  private recordOf(bidId: string, snap: BidSnapshot): StoredBid {
    return {
      v: STORES.bids.version,
      bidId,
      state: flatState(snap.value),
      at: this.c.clock.now(),
      snapshot: { value: snap.value, context: snap.context },
    }
  }
}
