/**
 * The output archives this provider keeps for its requesters, and when each goes (sublevel
 * `kept-archives`, keyed by contract id; specs/data-plane.md, "Archives kept by the provider").
 * An archive is released (its grant revoked, its blob deleted when nothing else holds it:
 * `BlobService.release`) when its requester says it has it (`/dms/blob/release`), else at its
 * contract's settlement plus `keepMs`, so a requester whose job was claimed can still fetch it
 * within its dispute window. Per requester the archives kept hold at most `maxBytesPerRequester`:
 * past it the oldest settled ones are released first. Deadlines are stored and re-armed on the
 * injected clock at start. Before this, every archive stayed for ever (issue 29).
 */
import { STORES } from '../store/tables.js'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { isCode } from '../../actors/errors.js'
import { SerialQueue } from '../../actors/serial.js'
import type { BlobService } from '../blobs/service.js'
import { Repo, type Db } from '../store/db.js'
import type { BookEntry, ProviderBooks } from './books.js'

/** @default 24 hours: the contract-db's default dispute window (specs/contract-db.md, "Claims"). */
export const DEFAULT_OUTPUTS_KEEP_MS = 24 * 60 * 60 * 1000
/** @default 4 GiB: sixteen archives of the default `maxOutputBytes`. */
export const DEFAULT_OUTPUTS_BYTES_PER_REQUESTER = 4 * 1024 ** 3
/** How long a release that failed (a store error) waits before it is tried again. */
const RETRY_MS = 60_000

/** One output archive kept for a requester. */
export interface KeptArchive {
  contractId: string
  jobId: string
  requester: string
  sha256: string
  size: number
  /** When it was published. */
  at: number
  /** When this provider kept its contract's settlement. */
  settledAt?: number
  /** When it is released: `settledAt + keepMs` (or a retry's time). */
  releaseAt?: number
  /** Its requester released it before the settlement: released at the settlement. */
  releasedEarly?: boolean
}

export interface KeptArchivesComponents {
  db: Db
  clock: Clock
  log: Logger
  blobs: Pick<BlobService, 'release' | 'onReleased'>
  /** Settlements (`settled` events), and the entries read at start for those kept meanwhile. */
  books: Pick<ProviderBooks, 'list' | 'events'>
}

export interface KeptArchivesInit {
  /** How long an archive is kept after its contract's settlement. @default 86400000 (24 h) */
  keepMs?: number
  /** Bytes of archives kept per requester; past it the oldest settled go first. @default 4 GiB */
  maxBytesPerRequester?: number
}

export class KeptArchives {
  private readonly repo: Repo<KeptArchive>
  private readonly kept = new Map<string, KeptArchive>()
  private timer: unknown
  private started = false
  private readonly off: Array<() => void> = []
  /** Changes one at a time: a settlement, a publish and a deadline read before they write. */
  private readonly queue = new SerialQueue()
  readonly keepMs: number
  readonly maxBytesPerRequester: number

  constructor(
    private readonly c: KeptArchivesComponents,
    init: KeptArchivesInit = {},
  ) {
    this.repo = new Repo(c.db, STORES.keptArchives.name)
    this.keepMs = init.keepMs ?? DEFAULT_OUTPUTS_KEEP_MS
    this.maxBytesPerRequester = init.maxBytesPerRequester ?? DEFAULT_OUTPUTS_BYTES_PER_REQUESTER
  }

  /**
   * Loads the stored archives, gives a release deadline to those whose settlement the books kept
   * while none was set (a crash between the two), releases what is due and arms the next deadline.
   */
  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    for (const a of await this.repo.values()) this.kept.set(a.contractId, a)
    const onSettled = (e: BookEntry) => void this.settled(e.contractId).catch(this.warn('settlement'))
    this.c.books.events.on('settled', onSettled)
    this.off.push(
      () => this.c.books.events.off('settled', onSettled),
      this.c.blobs.onReleased(
        (r) => void this.queue.run(() => this.releasedByRequester(r)).catch(this.warn('release')),
      ),
    )
    for (const e of await this.c.books.list())
      if (e.settlement !== undefined && this.kept.get(e.contractId)?.releaseAt === undefined)
        await this.settled(e.contractId)
    await this.queue.run(() => this.releaseDue())
  }

  stop(): void {
    this.started = false
    for (const off of this.off.splice(0)) off()
    if (this.timer !== undefined) this.c.clock.clearTimeout(this.timer)
    this.timer = undefined
  }

  /** Resolves once the changes queued so far (settlements, releases) are done. */
  idle(): Promise<void> {
    return this.queue.idle()
  }

  /** Archives kept now, per requester in bytes. */
  bytesOf(requester: string): number {
    let n = 0
    for (const a of this.kept.values()) if (a.requester === requester) n += a.size
    return n
  }

  list(): KeptArchive[] {
    return [...this.kept.values()]
  }

  /**
   * An archive is about to be published for `a.requester` (stored first, so a crash between the
   * two leaves a record whose release finds no grant, never a grant no deadline covers). Past the
   * requester's bound, its oldest settled archives are released.
   */
  published(a: Omit<KeptArchive, 'at' | 'settledAt' | 'releaseAt'>): Promise<void> {
    return this.queue.run(async () => {
      const prior = this.kept.get(a.contractId)
      // Published again after a restart: its settlement and deadline stay.
      await this.put({ ...prior, ...a, at: prior?.at ?? this.c.clock.now() })
      await this.bound(a.requester)
    })
  }

  /** The contract settled: its archive is released `keepMs` from now. */
  settled(contractId: string): Promise<void> {
    return this.queue.run(async () => {
      const a = this.kept.get(contractId)
      if (a === undefined || a.settledAt !== undefined) return
      const now = this.c.clock.now()
      await this.put({ ...a, settledAt: now, releaseAt: a.releasedEarly === true ? now : now + this.keepMs })
      await this.bound(a.requester)
    })
  }

  /**
   * A requester's release (`/dms/blob/release`) of an archive whose contract has not settled is put
   * off until the settlement (true): the contract-db may yet fetch it to check a rejected result
   * (specs/contract-db.md, "Rejections"), and a requester must not be able to delete it first.
   * Not queued: the keeper's own releases (of settled archives) go through here too.
   */
  async deferred(r: { peer: string; sha256: string; jobId: string }): Promise<boolean> {
    const a = [...this.kept.values()].find(
      (k) => k.requester === r.peer && k.sha256 === r.sha256 && k.jobId === r.jobId,
    )
    if (a === undefined || a.settledAt !== undefined) return false
    if (a.releasedEarly !== true) await this.put({ ...a, releasedEarly: true })
    return true
  }

  /** The requester released an archive itself (`/dms/blob/release`): nothing left to release. */
  private async releasedByRequester(r: { peer: string; sha256: string; jobId: string }): Promise<void> {
    for (const a of [...this.kept.values()])
      if (a.requester === r.peer && a.sha256 === r.sha256 && a.jobId === r.jobId) await this.drop(a)
    this.arm()
  }

  /** Releases the requester's oldest settled archives while it holds more than its bound. */
  private async bound(requester: string): Promise<void> {
    let over = this.bytesOf(requester) - this.maxBytesPerRequester
    if (over <= 0) return this.arm()
    const settled = [...this.kept.values()]
      .filter((a) => a.requester === requester && a.settledAt !== undefined)
      .sort((x, y) => (x.settledAt as number) - (y.settledAt as number))
    for (const a of settled) {
      if (over <= 0) break
      this.c.log.info(
        { requester, contractId: a.contractId, bytes: this.bytesOf(requester) },
        'archive released early: the requester holds more than its bound here',
      )
      if (await this.release(a)) over -= a.size
    }
    this.arm()
  }

  /** Releases every archive whose deadline has come, then arms the next one. */
  private async releaseDue(): Promise<void> {
    const now = this.c.clock.now()
    for (const a of [...this.kept.values()])
      if (a.releaseAt !== undefined && a.releaseAt <= now) await this.release(a)
    this.arm()
  }

  /** Revokes the grant (and deletes the blob when nothing else holds it); true once it is gone. */
  private async release(a: KeptArchive): Promise<boolean> {
    try {
      await this.c.blobs.release(a.requester, a.sha256, a.jobId)
    } catch (err) {
      if (!isCode(err, 'BLOB_NOT_GRANTED')) {
        // Kept, tried again later: a store error must not lose the deadline.
        this.c.log.warn({ err, contractId: a.contractId }, 'archive not released, tried again later')
        await this.put({ ...a, releaseAt: this.c.clock.now() + RETRY_MS })
        return false
      }
    }
    await this.drop(a)
    return true
  }

  private async drop(a: KeptArchive): Promise<void> {
    this.kept.delete(a.contractId)
    await this.repo.del(a.contractId)
  }

  private async put(a: KeptArchive): Promise<void> {
    this.kept.set(a.contractId, a)
    await this.repo.put(a.contractId, a)
  }

  /** One timer, for the earliest deadline. */
  private arm(): void {
    if (!this.started) return
    if (this.timer !== undefined) this.c.clock.clearTimeout(this.timer)
    this.timer = undefined
    let next: number | undefined
    for (const a of this.kept.values())
      if (a.releaseAt !== undefined && (next === undefined || a.releaseAt < next)) next = a.releaseAt
    if (next === undefined) return
    this.timer = this.c.clock.setTimeout(
      () => {
        this.timer = undefined
        void this.queue.run(() => this.releaseDue()).catch(this.warn('deadline'))
      },
      Math.max(0, next - this.c.clock.now()),
    )
  }

  private warn(what: string) {
    return (err: unknown) => this.c.log.warn({ err }, `kept archives: ${what} failed`)
  }
}
