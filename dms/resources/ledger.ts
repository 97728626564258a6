/**
 * The provider's resource ledger: the current offer and what is promised out of it.
 *
 * An entry moves reserved -> locked -> allocated and leaves by `release`. A reservation holds
 * resources while a bid is open and lapses at its `expiresAt`; locks and allocations stay until
 * released (they survive restarts). An entry may hold a slot for later (`start`, `until`:
 * ledger-slots.ts); the plan never exceeds the offer at any instant, nor what is allocated now:
 *
 * - every mutation runs alone (a promise-chain mutex) and checks fit against the state left by
 *   the previous one;
 * - every mutation is one atomic `db.batch`, and the in-memory view changes only after it
 *   succeeded, so memory and disk never disagree and a crash leaves either all or nothing;
 * - expired reservations stop counting the moment they expire and are deleted by the next
 *   mutation's batch (and by `start`).
 *
 * The offer itself is stored in the same database (it is state, not config): `setOffer` onboards or
 * changes it, `withdrawOffer` offboards (no new entries; live ones run to their end).
 * Spec: specs/resources.md.
 */
import type { Clock } from '../../actors/clock.js'
import { SerialQueue } from '../../actors/serial.js'
import { child, type Logger } from '../log.js'
import { Repo, type Db } from '../store/db.js'
import {
  EntryExistsError,
  EntryNotFoundError,
  InvalidTransitionError,
  LedgerNotStartedError,
  NoOfferError,
  NotOnboardedError,
  OfferBelowCommittedError,
  OfferWithdrawnError,
  ReservationExpiredError,
  type Committed,
} from './errors.js'
import {
  checkId,
  checkResources,
  checkTime,
  commitmentOf,
  copy,
  isExpired,
  newEntry,
  type LedgerEntry,
  type Slot,
} from './ledger-entry.js'
import { checkFits, checkStartsNow, earliestSlot, offerHolds, startsNow } from './ledger-slots.js'
import { floorZero, normalize, sub } from './math.js'
import { ZERO, type Offer, type Resources } from './types.js'

export type { LedgerEntry, LedgerEntryState, Slot } from './ledger-entry.js'

export interface ResourceSummary {
  /** The offered resources (all zero before an offer is set). */
  offer: Resources
  reserved: Resources
  locked: Resources
  allocated: Resources
  /** offer - (reserved + locked + allocated), never below zero; zero while the offer is withdrawn. */
  free: Resources
}

export interface ResourceLedgerComponents {
  db: Db
  /** Reads the time (expiries). */
  clock: Pick<Clock, 'now'>
  log: Logger
}

const OFFER_KEY = 'current'

type Status = 'stopped' | 'started'

/** What one mutation wants to write. */
interface Change {
  put?: LedgerEntry[]
  del?: string[]
  offer?: Offer
}

export class ResourceLedger {
  private readonly db: Db
  private readonly clock: Pick<Clock, 'now'>
  private readonly log: Logger
  private readonly offers: Repo<Offer>
  private readonly ledger: Repo<LedgerEntry>
  private offer: Offer | undefined
  private readonly byId = new Map<string, LedgerEntry>()
  private status: Status = 'stopped'
  private readonly freedListeners = new Set<() => void>()
  /** The mutex: one mutation at a time. */
  private readonly serial = new SerialQueue()

  constructor(components: ResourceLedgerComponents) {
    this.db = components.db
    this.clock = components.clock
    this.log = child(components.log, 'dms:resources:ledger')
    this.offers = new Repo<Offer>(this.db, 'offer')
    this.ledger = new Repo<LedgerEntry>(this.db, 'ledger')
  }

  /**
   * Calls `fn` after each write that removed entries (a release, an expired reservation): the
   * provider's capacity news. Returns the unsubscribe.
   */
  onFreed(fn: () => void): () => void {
    this.freedListeners.add(fn)
    return () => this.freedListeners.delete(fn)
  }

  isStarted(): boolean {
    return this.status === 'started'
  }

  /**
   * Loads the offer and entries, and deletes reservations that expired (including while the node
   * was down). Idempotent.
   */
  async start(): Promise<void> {
    return this.exclusive(async () => {
      if (this.status === 'started') return
      const offer = await this.offers.get(OFFER_KEY)
      const entries = await this.ledger.values()
      const now = this.clock.now()
      const expired = entries.filter((e) => isExpired(e, now))
      if (expired.length > 0) await this.db.batch(expired.map((e) => this.ledger.delOp(e.id)))
      this.offer = offer
      this.byId.clear()
      for (const e of entries) if (!isExpired(e, now)) this.byId.set(e.id, e)
      this.status = 'started'
      if (expired.length > 0)
        this.log.info({ released: expired.map((e) => e.id) }, 'released expired reservations')
      this.log.debug({ entries: this.byId.size, offer: offer?.resources }, 'ledger started')
    })
  }

  /** Waits for the mutation in progress, then refuses new ones until `start`. Idempotent. */
  async stop(): Promise<void> {
    return this.exclusive(() => {
      if (this.status === 'stopped') return Promise.resolve()
      this.status = 'stopped'
      this.byId.clear()
      this.offer = undefined
      this.log.debug('ledger stopped')
      return Promise.resolve()
    })
  }

  getOffer(): Offer | undefined {
    return this.offer === undefined
      ? undefined
      : {
          ...this.offer,
          resources: { ...this.offer.resources },
          prices: { ...this.offer.prices },
          ...(this.offer.gpuIndices === undefined ? {} : { gpuIndices: [...this.offer.gpuIndices] }),
        }
  }

  /** Live entries (expired reservations left out), oldest first. */
  entries(): LedgerEntry[] {
    const now = this.clock.now()
    return this.live(now)
      .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id))
      .map(copy)
  }

  /** The offer minus every live entry; zero before an offer is set. */
  free(): Resources {
    return this.summary().free
  }

  summary(): ResourceSummary {
    const offer = this.offer?.resources ?? { ...ZERO }
    const c = this.committed(this.clock.now())
    const withdrawn = this.offer?.withdrawnAt !== undefined
    return {
      offer: { ...offer },
      reserved: c.reserved,
      locked: c.locked,
      allocated: c.allocated,
      free: withdrawn ? { ...ZERO } : floorZero(sub(offer, c.total)),
    }
  }

  /** Locks whose caller-given deadline has passed; the ledger keeps them until released. */
  overdueLocks(): LedgerEntry[] {
    const now = this.clock.now()
    return this.entries().filter(
      (e) => e.state === 'locked' && e.expiresAt !== undefined && e.expiresAt <= now,
    )
  }

  /**
   * Replaces the offer (an offer without `withdrawnAt` onboards a withdrawn one again).
   * @throws OfferBelowCommittedError if any dimension is below what is reserved + locked + allocated.
   */
  async setOffer(offer: Offer): Promise<void> {
    checkResources(offer.resources, 'the offer')
    return this.mutate('setOffer', (now) => {
      if (!offerHolds(this.live(now), offer.resources, now))
        throw new OfferBelowCommittedError(normalize(offer.resources), this.committed(now))
      const next: Offer = { ...offer, resources: normalize(offer.resources), prices: { ...offer.prices } }
      if (offer.gpuIndices !== undefined) next.gpuIndices = [...offer.gpuIndices]
      return { change: { offer: next }, result: undefined }
    })
  }

  /**
   * Withdraws the offer (offboarding): `reserve` and `lockDirect` are refused from now on, while
   * live entries keep their resources and move on as usual (a reservation may still be locked).
   * Withdrawing a withdrawn offer changes nothing. Returns the withdrawn offer.
   * @throws NotOnboardedError if there is no offer.
   */
  async withdrawOffer(): Promise<Offer> {
    return this.mutate('withdrawOffer', (now) => {
      if (this.offer === undefined) throw new NotOnboardedError()
      if (this.offer.withdrawnAt !== undefined) return { change: {}, result: this.getOffer() as Offer }
      const next: Offer = { ...this.offer, withdrawnAt: now }
      return { change: { offer: next }, result: { ...next, resources: { ...next.resources } } }
    })
  }

  /**
   * Holds `resources` for `jobId` until `expiresAt` (ms epoch), at once or in `slot`.
   * @throws InsufficientResourcesError, EntryExistsError, NoOfferError, OfferWithdrawnError, ReservationExpiredError (expiresAt not in the future)
   */
  async reserve(
    id: string,
    jobId: string,
    resources: Resources,
    expiresAt: number,
    slot: Slot = {},
  ): Promise<LedgerEntry> {
    checkId(id, 'id')
    checkId(jobId, 'jobId')
    checkResources(resources, `reservation ${id}`)
    checkTime(expiresAt, 'expiresAt')
    return this.mutate('reserve', (now) => {
      if (expiresAt <= now) throw new ReservationExpiredError(id, expiresAt, now)
      const entry = newEntry(id, jobId, resources, 'reserved', slot, now)
      entry.expiresAt = expiresAt
      this.checkNewEntry(entry, now)
      return { change: { put: [entry] }, result: entry }
    })
  }

  /**
   * Turns a live reservation into a lock. Locking a lock again only updates its deadline.
   * @param opts.expiresAt deadline kept on the lock for the caller (the ledger does not enforce it)
   * @throws ReservationExpiredError, EntryNotFoundError, InvalidTransitionError (already allocated)
   */
  async lock(id: string, opts: { expiresAt?: number } = {}): Promise<LedgerEntry> {
    checkId(id, 'id')
    if (opts.expiresAt !== undefined) checkTime(opts.expiresAt, 'expiresAt')
    return this.mutate('lock', (now) => {
      const e = this.byId.get(id)
      if (e === undefined) throw new EntryNotFoundError(id)
      // The expired reservation itself is deleted by this mutation's batch (see `mutate`).
      if (isExpired(e, now)) throw new ReservationExpiredError(id, e.expiresAt!, now)
      if (e.state === 'allocated') throw new InvalidTransitionError(id, e.state, 'locked', 'reserved')
      const next: LedgerEntry = { ...copy(e), state: 'locked' }
      if (opts.expiresAt === undefined) delete next.expiresAt
      else next.expiresAt = opts.expiresAt
      return { change: { put: [next] }, result: next }
    })
  }

  /**
   * Locks resources without a prior reservation.
   * @throws InsufficientResourcesError, EntryExistsError, NoOfferError, OfferWithdrawnError
   */
  async lockDirect(
    id: string,
    jobId: string,
    resources: Resources,
    opts: { expiresAt?: number } & Slot = {},
  ): Promise<LedgerEntry> {
    checkId(id, 'id')
    checkId(jobId, 'jobId')
    checkResources(resources, `lock ${id}`)
    if (opts.expiresAt !== undefined) checkTime(opts.expiresAt, 'expiresAt')
    return this.mutate('lockDirect', (now) => {
      const entry = newEntry(id, jobId, resources, 'locked', opts, now)
      if (opts.expiresAt !== undefined) entry.expiresAt = opts.expiresAt
      this.checkNewEntry(entry, now)
      return { change: { put: [entry] }, result: entry }
    })
  }

  /**
   * Marks a lock as allocated (the workload runs), if it may start now (`canStart`); a slot
   * allocated early starts now. Allocating an allocation is a no-op.
   * @throws EntryNotFoundError, InvalidTransitionError (still only reserved), InsufficientResourcesError (not now)
   */
  async allocate(id: string, allocationId?: string): Promise<LedgerEntry> {
    checkId(id, 'id')
    return this.mutate('allocate', (now) => {
      const e = this.byId.get(id)
      if (e === undefined || isExpired(e, now)) throw new EntryNotFoundError(id)
      if (e.state === 'reserved') throw new InvalidTransitionError(id, e.state, 'allocated', 'locked')
      if (e.state === 'allocated') return { change: {}, result: copy(e) }
      checkStartsNow(this.live(now), e, this.offer?.resources ?? ZERO, now)
      const next: LedgerEntry = { ...copy(e), state: 'allocated', ...(allocationId ? { allocationId } : {}) }
      delete next.expiresAt
      if (next.start !== undefined && next.start > now) next.start = now
      return { change: { put: [next] }, result: next }
    })
  }

  /** Removes an entry in any state. Returns false (and does nothing else) if there was none. */
  async release(id: string): Promise<boolean> {
    checkId(id, 'id')
    return this.mutate('release', () => {
      const e = this.byId.get(id)
      if (e === undefined) return { change: {}, result: false }
      return { change: { del: [id] }, result: true }
    })
  }

  /** Deletes expired reservations now (otherwise the next mutation does). Returns what was released. */
  async releaseExpired(): Promise<LedgerEntry[]> {
    return this.mutate('releaseExpired', (now) => ({
      change: {},
      result: [...this.byId.values()].filter((e) => isExpired(e, now)).map(copy),
    }))
  }

  /** Whether entry `id` may be allocated now (ledger-slots.ts `startsNow`); false if there is none. */
  canStart(id: string): boolean {
    const now = this.clock.now()
    const e = this.byId.get(id)
    if (e === undefined || isExpired(e, now) || this.offer === undefined) return false
    return startsNow(this.live(now), e, this.offer.resources, now)
  }

  /**
   * The earliest start within `maxAheadMs` from now at which `resources` held for `durationMs`
   * fit (now if they fit at once); undefined if none, or if no new entry may be made.
   */
  slotFor(resources: Resources, durationMs: number, maxAheadMs: number): number | undefined {
    if (this.offer === undefined || this.offer.withdrawnAt !== undefined) return undefined
    const now = this.clock.now()
    return earliestSlot(this.live(now), this.offer.resources, now, { resources, durationMs, maxAheadMs })
  }

  private live(now: number): LedgerEntry[] {
    return [...this.byId.values()].filter((e) => !isExpired(e, now))
  }

  private checkNewEntry(entry: LedgerEntry, now: number): void {
    const existing = this.byId.get(entry.id)
    if (existing !== undefined && !isExpired(existing, now))
      throw new EntryExistsError(entry.id, existing.state)
    if (this.offer === undefined) throw new NoOfferError()
    if (this.offer.withdrawnAt !== undefined) throw new OfferWithdrawnError(this.offer.withdrawnAt)
    checkFits(this.live(now), entry, this.offer.resources, now)
  }

  private committed(now: number): Committed {
    return commitmentOf(this.byId.values(), now)
  }

  /** Runs `fn` after every earlier call has settled. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.serial.run(fn)
  }

  /**
   * One mutation: under the mutex, `plan` decides (or throws) from the current state; its change
   * plus the deletion of expired reservations is written as one batch; then memory is updated.
   * If `plan` throws, expired reservations are still deleted before the error is rethrown.
   */
  private mutate<T>(op: string, plan: (now: number) => { change: Change; result: T }): Promise<T> {
    return this.exclusive(async () => {
      if (this.status !== 'started') throw new LedgerNotStartedError()
      const now = this.clock.now()
      const expired = [...this.byId.values()].filter((e) => isExpired(e, now)).map((e) => e.id)
      let planned: { change: Change; result: T }
      try {
        planned = plan(now)
      } catch (err) {
        if (expired.length > 0) {
          try {
            await this.commit({}, expired)
          } catch (writeErr) {
            this.log.warn({ err: writeErr }, 'could not delete expired reservations')
          }
        }
        throw err
      }
      await this.commit(planned.change, expired)
      this.log.debug({ op, change: planned.change, expired }, 'ledger updated')
      return planned.result
    })
  }

  private async commit(change: Change, expired: string[]): Promise<void> {
    const puts = change.put ?? []
    const written = new Set(puts.map((e) => e.id))
    const dels = new Set([...expired, ...(change.del ?? [])].filter((id) => !written.has(id)))
    const ops = [
      ...[...dels].map((id) => this.ledger.delOp(id)),
      ...puts.map((e) => this.ledger.putOp(e.id, e)),
      ...(change.offer === undefined ? [] : [this.offers.putOp(OFFER_KEY, change.offer)]),
    ]
    if (ops.length === 0) return
    await this.db.batch(ops)
    for (const id of dels) this.byId.delete(id)
    // Copies, so that callers holding a returned entry cannot change the ledger.
    for (const e of puts) this.byId.set(e.id, copy(e))
    if (change.offer !== undefined) this.offer = change.offer
    if (expired.length > 0) this.log.info({ released: expired }, 'released expired reservations')
    if (dels.size > 0) for (const fn of this.freedListeners) fn()
  }
}
