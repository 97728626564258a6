/**
 * The provider's resource ledger: the current offer and what is promised out of it.
 *
 * An entry moves reserved -> locked -> allocated and leaves by `release`. A reservation holds
 * resources while a bid is open and lapses at its `expiresAt`; locks and allocations stay until
 * released (they survive restarts). An entry may hold a slot for later (`start`, `until`:
 * ledger-slots.ts); the plan never exceeds the offer at any instant, nor what is allocated now.
 * This file decides what each operation may do; ledger-store.ts keeps the state and writes each
 * decision (one mutation at a time, one atomic batch, memory changed only after the write,
 * expired reservations deleted by the next mutation).
 *
 * The offer itself is stored in the same database (it is state, not config): `setOffer` onboards or
 * changes it, `withdrawOffer` offboards (no new entries; live ones run to their end).
 * Spec: specs/resources.md.
 */
import type { Clock } from '../../actors/clock.js'
import { child, type Logger } from '../log.js'
import type { Db } from '../store/db.js'
import {
  EntryExistsError,
  EntryNotFoundError,
  GpusTakenError,
  InvalidTransitionError,
  NoOfferError,
  NotOnboardedError,
  OfferBelowCommittedError,
  OfferWithdrawnError,
  ReservationExpiredError,
} from './errors.js'
import {
  checkId,
  checkResources,
  checkTime,
  copy,
  isExpired,
  newEntry,
  type LedgerEntry,
  type Slot,
} from './ledger-entry.js'
import { checkFits, checkStartsNow, earliestSlot, offerHolds, startsNow } from './ledger-slots.js'
import { LedgerStore } from './ledger-store.js'
import { freeGpuIndices, heldGpuIndices, offeredGpuIndices, pickGpus } from './gpu-pick.js'
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

export class ResourceLedger {
  private readonly clock: Pick<Clock, 'now'>
  private readonly store: LedgerStore

  constructor(components: ResourceLedgerComponents) {
    this.clock = components.clock
    const log = child(components.log, 'dms:resources:ledger')
    this.store = new LedgerStore({ db: components.db, clock: this.clock, log })
  }

  /**
   * Calls `fn` after each write that removed entries (a release, an expired reservation): the
   * provider's capacity news. Returns the unsubscribe.
   */
  onFreed(fn: () => void): () => void {
    return this.store.onFreed(fn)
  }

  isStarted(): boolean {
    return this.store.isStarted()
  }

  /**
   * Loads the offer and entries, and deletes reservations that expired (including while the node
   * was down). Idempotent.
   */
  async start(): Promise<void> {
    return this.store.start()
  }

  /** Waits for the mutation in progress, then refuses new ones until `start`. Idempotent. */
  async stop(): Promise<void> {
    return this.store.stop()
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
    const c = this.store.committed(this.clock.now())
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
    return this.store.mutate('setOffer', (now) => {
      if (!offerHolds(this.live(now), offer.resources, now))
        throw new OfferBelowCommittedError(normalize(offer.resources), this.store.committed(now))
      const next: Offer = { ...offer, resources: normalize(offer.resources), prices: { ...offer.prices } }
      if (offer.gpuIndices !== undefined) next.gpuIndices = [...offer.gpuIndices]
      return { change: { offer: next }, result: undefined }
    })
  }

  /**
   * Withdraws the offer (offboarding): `reserve` is refused from now on, while
   * live entries keep their resources and move on as usual (a reservation may still be locked).
   * Withdrawing a withdrawn offer changes nothing. Returns the withdrawn offer.
   * @throws NotOnboardedError if there is no offer.
   */
  async withdrawOffer(): Promise<Offer> {
    return this.store.mutate('withdrawOffer', (now) => {
      if (this.offer === undefined) throw new NotOnboardedError()
      if (this.offer.withdrawnAt !== undefined) return { change: {}, result: this.getOffer() as Offer }
      const next: Offer = { ...this.offer, withdrawnAt: now }
      return { change: { offer: next }, result: { ...next, resources: { ...next.resources } } }
    })
  }

  /**
   * Holds `resources` for `jobId` until `expiresAt` (ms epoch), at once or in `slot`. With GPUs,
   * the entry also holds that many of the offer's GPUs by index (`gpuIndices`), the lowest free
   * among `gpus.eligible` (absent: any offered; gpu-pick.ts).
   * @throws InsufficientResourcesError, GpusTakenError, EntryExistsError, NoOfferError, OfferWithdrawnError, ReservationExpiredError (expiresAt not in the future)
   */
  async reserve(
    id: string,
    jobId: string,
    resources: Resources,
    expiresAt: number,
    slot: Slot = {},
    gpus: { eligible?: readonly number[] } = {},
  ): Promise<LedgerEntry> {
    checkId(id, 'id')
    checkId(jobId, 'jobId')
    checkResources(resources, `reservation ${id}`)
    checkTime(expiresAt, 'expiresAt')
    return this.store.mutate('reserve', (now) => {
      if (expiresAt <= now) throw new ReservationExpiredError(id, expiresAt, now)
      const entry = newEntry(id, jobId, resources, 'reserved', slot, now)
      entry.expiresAt = expiresAt
      this.checkNewEntry(entry, now)
      if (entry.resources.gpus > 0) {
        const offered = offeredGpuIndices(this.offer)
        const picked = pickGpus(this.live(now), offered, entry.resources.gpus, gpus.eligible)
        if (picked === undefined)
          throw new GpusTakenError(
            entry.resources.gpus,
            freeGpuIndices(this.live(now), offered, gpus.eligible).length,
          )
        entry.gpuIndices = picked
      }
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
    return this.store.mutate('lock', (now) => {
      const e = this.store.get(id)
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
   * Marks a lock as allocated (the workload runs), if it may start now (`canStart`); a slot
   * allocated early starts now. Allocating an allocation is a no-op.
   * @throws EntryNotFoundError, InvalidTransitionError (still only reserved), InsufficientResourcesError (not now)
   */
  async allocate(id: string, allocationId?: string): Promise<LedgerEntry> {
    checkId(id, 'id')
    return this.store.mutate('allocate', (now) => {
      const e = this.store.get(id)
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
    return this.store.mutate('release', () => {
      const e = this.store.get(id)
      if (e === undefined) return { change: {}, result: false }
      return { change: { del: [id] }, result: true }
    })
  }

  /** The GPU indices the live entries hold (gpu-pick.ts): the ones a new entry cannot have. */
  heldGpus(): number[] {
    return [...heldGpuIndices(this.live(this.clock.now()))].sort((a, b) => a - b)
  }

  /** Deletes expired reservations now (otherwise the next mutation does). Returns what was released. */
  async releaseExpired(): Promise<LedgerEntry[]> {
    return this.store.mutate('releaseExpired', (now) => ({
      change: {},
      result: this.store
        .all()
        .filter((e) => isExpired(e, now))
        .map(copy),
    }))
  }

  /** Whether entry `id` may be allocated now (ledger-slots.ts `startsNow`); false if there is none. */
  canStart(id: string): boolean {
    const now = this.clock.now()
    const e = this.store.get(id)
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

  /** The stored offer, as kept. */
  private get offer(): Offer | undefined {
    return this.store.offer
  }

  private live(now: number): LedgerEntry[] {
    return this.store.live(now)
  }

  private checkNewEntry(entry: LedgerEntry, now: number): void {
    const existing = this.store.get(entry.id)
    if (existing !== undefined && !isExpired(existing, now))
      throw new EntryExistsError(entry.id, existing.state)
    if (this.offer === undefined) throw new NoOfferError()
    if (this.offer.withdrawnAt !== undefined) throw new OfferWithdrawnError(this.offer.withdrawnAt)
    checkFits(this.live(now), entry, this.offer.resources, now)
  }
}
