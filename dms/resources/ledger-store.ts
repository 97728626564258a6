/**
 * The resource ledger's state and its one way of changing it (ledger.ts decides what each
 * operation may do; this file keeps what was decided):
 *
 * - every mutation runs alone (a promise-chain mutex) and plans against the state left by the
 *   previous one;
 * - every mutation is one atomic `db.batch`, and the in-memory view changes only after it
 *   succeeded, so memory and disk never disagree and a crash leaves either all or nothing;
 * - expired reservations stop counting the moment they expire and are deleted by the next
 *   mutation's batch (and by `start`).
 *
 * Spec: specs/resources.md.
 */
import { STORES } from '../store/tables.js'
import type { Clock } from '../../actors/clock.js'
import { SerialQueue } from '../../actors/serial.js'
import type { Logger } from '../log.js'
import { Repo, type Db } from '../store/db.js'
import { LedgerNotStartedError, type Committed } from './errors.js'
import { commitmentOf, copy, isExpired, type LedgerEntry } from './ledger-entry.js'
import type { Offer } from './types.js'

const OFFER_KEY = 'current'

type Status = 'stopped' | 'started'

/** What one mutation wants to write. */
export interface Change {
  put?: LedgerEntry[]
  del?: string[]
  offer?: Offer
}

/** What a mutation's plan decided: the change to write and the value to return. */
export interface Planned<T> {
  change: Change
  result: T
}

export interface LedgerStoreComponents {
  db: Db
  /** Reads the time (expiries). */
  clock: Pick<Clock, 'now'>
  /** The ledger's own logger (`dms:resources:ledger`). */
  log: Logger
}

export class LedgerStore {
  private readonly db: Db
  private readonly clock: Pick<Clock, 'now'>
  private readonly log: Logger
  private readonly offers: Repo<Offer>
  private readonly ledger: Repo<LedgerEntry>
  private current: Offer | undefined
  private readonly byId = new Map<string, LedgerEntry>()
  private status: Status = 'stopped'
  private readonly freedListeners = new Set<() => void>()
  /** The mutex: one mutation at a time. */
  private readonly serial = new SerialQueue()

  constructor(components: LedgerStoreComponents) {
    this.db = components.db
    this.clock = components.clock
    this.log = components.log
    this.offers = new Repo<Offer>(this.db, STORES.offer.name)
    this.ledger = new Repo<LedgerEntry>(this.db, STORES.ledger.name)
  }

  /** The stored offer, as kept (callers copy before handing it out). */
  get offer(): Offer | undefined {
    return this.current
  }

  /** The entry `id` as kept, expired or not (callers copy before handing it out). */
  get(id: string): LedgerEntry | undefined {
    return this.byId.get(id)
  }

  /** Every entry as kept, expired reservations included. */
  all(): LedgerEntry[] {
    return [...this.byId.values()]
  }

  /** Entries that count at `now` (expired reservations left out). */
  live(now: number): LedgerEntry[] {
    return this.all().filter((e) => !isExpired(e, now))
  }

  committed(now: number): Committed {
    return commitmentOf(this.byId.values(), now)
  }

  /** See ResourceLedger.onFreed. */
  onFreed(fn: () => void): () => void {
    this.freedListeners.add(fn)
    return () => this.freedListeners.delete(fn)
  }

  isStarted(): boolean {
    return this.status === 'started'
  }

  /** Loads the offer and entries, and deletes reservations that expired. Idempotent. */
  async start(): Promise<void> {
    return this.exclusive(async () => {
      if (this.status === 'started') return
      const offer = await this.offers.get(OFFER_KEY)
      const entries = await this.ledger.values()
      const now = this.clock.now()
      const expired = entries.filter((e) => isExpired(e, now))
      if (expired.length > 0) await this.db.batch(expired.map((e) => this.ledger.delOp(e.id)))
      this.current = offer
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
      this.current = undefined
      this.log.debug('ledger stopped')
      return Promise.resolve()
    })
  }

  /**
   * One mutation: under the mutex, `plan` decides (or throws) from the current state; its change
   * plus the deletion of expired reservations is written as one batch; then memory is updated.
   * If `plan` throws, expired reservations are still deleted before the error is rethrown.
   */
  mutate<T>(op: string, plan: (now: number) => Planned<T>): Promise<T> {
    return this.exclusive(async () => {
      if (this.status !== 'started') throw new LedgerNotStartedError()
      const now = this.clock.now()
      const expired = this.all()
        .filter((e) => isExpired(e, now))
        .map((e) => e.id)
      let planned: Planned<T>
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

  /** Runs `fn` after every earlier call has settled. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.serial.run(fn)
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
    if (change.offer !== undefined) this.current = change.offer
    if (expired.length > 0) this.log.info({ released: expired }, 'released expired reservations')
    if (dels.size > 0) for (const fn of this.freedListeners) fn()
  }
}
