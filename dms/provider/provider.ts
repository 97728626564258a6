/**
 * The provider role: answers bid requests it can serve with priced bids and carries each bid
 * through its machine (bid-machine.ts) from the reservation to the release: lock, contract,
 * invocation, the run in the engine, the result. This file wires the parts and runs their
 * lifecycle; each message has its handler (handlers/), each bid its machine (bid-book.ts).
 */
import { EventEmitter } from 'node:events'
import type { ProviderEvents } from './provider-events.js'
import { waitFor } from 'xstate'
import { every } from '../../actors/clock.js'
import type { Actor } from '../../actors/system.js'
import { ContractDbClient } from '../contract-clients/client.js'
import { TERMINATION, type Settlement, type SignedReceipt } from '../contracts/model.js'
import { W } from '../protocol/behaviours.js'
import { CAPACITY_TOPIC } from '../protocol/handles.js'
import { AllocationActors } from './allocation-actors.js'
import { provideBidActors } from './bid-actors.js'
import { BidBook } from './bid-book.js'
import { allocationState, RUNNING } from './bid-context.js'
import { LiveUsageBoard } from './live-usage.js'
import { ProviderModes, type ModeView } from './node-mode.js'
import { createBidMachine } from './bid-machine.js'
import { ProviderBooks, type BookEntry } from './books.js'
import { KeptArchives } from './kept-archives.js'
import { CapacityAnnouncer } from './capacity-news.js'
import { revokeContractDbGrant } from './handlers/result-again.js'
import { KeptResults } from './kept-results.js'
import { settleKeptResults, keepOutcome } from './outcomes.js'
import { startNoteSender } from './start-note.js'
import { ImageCheck } from './images.js'
import { migrateV01 } from './migrate-v01.js'
import { startInbox } from './inbox.js'
import type { BidRequestCounters } from './handlers/bid-request.js'
import { recover, type RecoverySummary } from './recover.js'
import type { ProviderInit } from './provider-init.js'
import { allocationOf, bidRecordOf, type AllocationRecord, type BidRecord } from './views.js'

export type { AllocationRecord, BidRecord } from './views.js'
export type { RequesterCap } from './requester-cap.js'
export type { RecoverySummary } from './recover.js'
export type { ProviderInit } from './provider-init.js'
export type { ProviderComponents } from './components.js'
import type { ProviderComponents } from './components.js'

export class ProviderService {
  private actor?: Actor
  private stopSweeper?: () => void
  private stopping = false
  /** What the provider tells the node's other parts: bids freed, requests ignored, allocations stored. */
  readonly events = new EventEmitter<ProviderEvents>()
  /** Bid requests' images: refused before any engine call, else looked up through a cache. */
  readonly images: ImageCheck
  private readonly book: BidBook
  /** What this provider was paid, claimed and is owed (books.ts). */
  readonly books: ProviderBooks
  /** Output archives kept for requesters until they release them or their deadline (kept-archives.ts). */
  readonly archives: KeptArchives
  /** Results kept until settlement, asked for again by restarted requesters (kept-results.ts). */
  readonly results: KeptResults
  private stopClaims?: () => void
  private readonly allocationActors: AllocationActors
  private readonly counts: BidRequestCounters = { declines: {}, ignored: {} }
  /** What `start` found left by an earlier process. */
  recovered?: RecoverySummary
  /** Announces freed capacity on CAPACITY_TOPIC (at most once a second). */
  readonly capacityNews: CapacityAnnouncer
  /** Each running allocation's usage so far (heartbeats, `GET /v1/allocations`). */
  readonly usage: LiveUsageBoard
  /** Ready, paused, draining or drained (specs/node-lifecycle.md). */
  readonly modes: ProviderModes
  /** Set by a graceful stop: bid requests are declined while the runs finish. */
  private stopDraining = false

  private get provisionTimeoutMs(): number {
    return this.init.provisionTimeoutMs ?? 300_000
  }

  constructor(
    private readonly c: ProviderComponents,
    private readonly init: ProviderInit,
  ) {
    this.images = new ImageCheck(c, init.images)
    this.allocationActors = new AllocationActors(c.system)
    this.usage = new LiveUsageBoard(() => c.clock.now())
    this.books = new ProviderBooks({
      db: c.db,
      clock: c.clock,
      log: c.log,
      contractDb: init.contractDb,
      claim: (e) => this.claim(e),
    })
    this.archives = new KeptArchives(
      { ...c, books: this.books },
      { keepMs: init.outputsKeepMs, maxBytesPerRequester: init.outputsBytesPerRequester },
    )
    const machine = provideBidActors(
      createBidMachine(c.clock, {
        contractWindowMs: init.contractWindowMs ?? 15_000,
        provisionTimeoutMs: this.provisionTimeoutMs,
        lockTtlMs: init.lockTtlMs ?? 60_000,
      }),
      {
        ...c,
        archives: this.archives,
        usage: this.usage,
        actorFor: (id) => this.allocationActors.get(id),
        sendUpdate: (id, to, update) => this.allocationActors.send(id, to, update),
        stopping: () => this.stopping,
        keepResult: (id, peer, m) =>
          keepOutcome({ books: this.books, results: this.results, log: c.log }, id, peer, m),
        startNote: startNoteSender({ ...c, peerId: () => this.peerId, client: () => this.cdbClient() }),
        allowNetwork: init.preferences?.allowNetwork,
      },
      { heartbeatMs: init.heartbeatMs },
    )
    this.book = new BidBook({ db: c.db, clock: c.clock, log: c.log, machine }, init)
    this.book.onTransition((rec, added) => this.allocationActors.report(rec, added))
    // Allocations are the invoked bids, stored with their bid; a bid never invoked is not one.
    this.book.onTransition((rec) => {
      if (rec.snapshot.context.allocation !== undefined)
        this.events.emit('allocation', rec.bidId, allocationState(rec.state))
    })
    this.book.onPrune((bidId, allocated) => {
      if (allocated) this.events.emit('allocation', bidId, undefined)
    })
    this.results = new KeptResults(c.db, c.clock)
    this.capacityNews = new CapacityAnnouncer({
      ...c,
      peerId: () => this.peerId,
      publish: async (news) => {
        if (this.actor === undefined) return
        await this.actor.publish(CAPACITY_TOPIC, W.capacityNews, news, 10_000)
      },
      announceOn: [
        (fn) => c.transport?.onTopicJoin?.(CAPACITY_TOPIC, fn) ?? (() => undefined),
        (fn) => {
          c.approval.events?.on('renewed', fn)
          return () => c.approval.events?.off('renewed', fn)
        },
      ],
    })
    // A result is kept (and its receipt booked) before it is delivered, until its settlement.
    settleKeptResults({ books: this.books, results: this.results, log: c.log })
    const revoke = revokeContractDbGrant({
      contractDb: init.contractDb,
      results: this.results,
      blobs: c.blobs,
    })
    this.books.events.on('settled', (e: BookEntry) => void revoke(e).catch(() => undefined))
    this.modes = new ProviderModes(c, () => this.book.size)
    // The book forgets an ended bid right after telling its listeners: counted once it has.
    this.book.onTransition(() => queueMicrotask(() => this.modes.check()))
  }

  /** The contract-db client over the provider's actor (`attempts` tries per request). */
  private cdbClient(attempts?: number): ContractDbClient {
    if (this.actor === undefined) throw new Error('provider stopped')
    return new ContractDbClient(
      { actor: this.actor, clock: this.c.clock },
      { contractDb: { peer: this.init.contractDb, addrs: this.init.contractDbAddrs ?? [] }, attempts },
    )
  }

  /** The claim of a contract whose requester stayed silent past settleBy (specs/contract-db.md, "Claims"). */
  private claim(e: BookEntry & { receipt: SignedReceipt }): Promise<Settlement> {
    if (this.actor === undefined) return Promise.reject(new Error('provider stopped'))
    return this.cdbClient(1).terminate(
      { contractId: e.contractId, reason: TERMINATION.requesterSilent, receipt: e.receipt },
      { contractId: e.contractId, escrow: e.escrow },
    )
  }

  /** Declines made, by reason, for metrics and `dms resources`. */
  get declines(): Record<string, number> {
    return this.counts.declines
  }

  /** Bid requests dropped without an answer, by reason (rate limit, approval, malformed...). */
  get bidRequestsIgnored(): Record<string, number> {
    return this.counts.ignored
  }

  get peerId(): string {
    return this.c.system.peerId
  }

  /** This provider's bids, as records (every stored bid, live or ended). */
  readonly bids = {
    values: async (): Promise<BidRecord[]> => (await this.book.values()).map(bidRecordOf),
  }

  /** This provider's allocations (`repo.values()`: every stored one), and `idle()`. */
  readonly allocations = {
    repo: { values: () => this.listAllocations() },
    idle: () => this.idle(),
  }

  /** Every stored allocation (invoked bid), live or ended. */
  async listAllocations(): Promise<AllocationRecord[]> {
    return (await this.book.values()).flatMap((r) => allocationOf(r) ?? [])
  }

  /** Allocations by state, counted from memory (no database read). */
  allocationStates(): Record<string, number> {
    return this.book.allocationStates()
  }

  /** Resolves once every allocation running now has ended (released its resources). */
  async idle(): Promise<void> {
    await Promise.all(this.book.inStates(RUNNING).map((a) => waitFor(a, (s) => s.status !== 'active')))
  }

  /**
   * Moves records of dms 0.1 to today's, restores every stored bid (live ones go on from where
   * they were, their deadlines kept), then answers messages.
   */
  async start(): Promise<void> {
    if (this.actor !== undefined) return
    this.stopping = false
    const migrated = await migrateV01(this.c.db, {
      log: this.c.log,
      now: this.c.clock.now(),
      ledger: this.c.ledger.entries(),
      provisionTimeoutMs: this.provisionTimeoutMs,
    })
    await this.archives.start()
    await this.book.start()
    await this.modes.start()
    this.actor = startInbox(
      {
        ...this.c,
        book: this.book,
        books: this.books,
        results: this.results,
        images: this.images,
        events: this.events,
        peerId: () => this.peerId,
        refusal: () => (this.stopDraining ? 'stopping' : this.modes.refusal()),
        counts: this.counts,
      },
      { ...this.init, provisionTimeoutMs: this.provisionTimeoutMs },
    )
    this.stopSweeper = every(this.c.clock, this.init.sweepIntervalMs ?? 5000, () => void this.sweep())
    this.stopClaims = every(this.c.clock, this.init.claimSweepMs ?? 60_000, () => {
      void this.books.claimDue().catch((err: unknown) => this.c.log.warn({ err }, 'claims failed'))
    })
    this.capacityNews.start()
    this.recovered = { ...(await recover(this.c, this.book)), migrated }
  }

  /** Releases expired reservations and locks no bid holds any more, and prunes ended bids. */
  async sweep(): Promise<void> {
    try {
      await this.c.ledger.releaseExpired()
      for (const e of this.c.ledger.overdueLocks()) {
        this.c.log.info({ jobId: e.jobId, id: e.id }, 'lock overdue: released')
        await this.c.ledger.release(e.id)
      }
      await this.book.prune()
    } catch (err) {
      this.c.log.warn({ err }, 'resource sweep failed')
    }
  }

  /** Stops bidding and frees the reservations no requester has taken up; the rest goes on. */
  async drain(): Promise<ModeView> {
    const v = await this.modes.drain()
    this.releaseOpenBids('provider draining')
    return v
  }

  private releaseOpenBids(reason: string): void {
    for (const a of this.book.inStates(new Set(['reserved']))) a.send({ type: 'RELEASE', reason })
  }

  /**
   * A graceful stop's first half: declines new bid requests, frees open reservations and waits up
   * to `deadlineMs` for the bids in progress to end. Resolves with how many were still live at
   * the deadline (`stop` then cancels their runs).
   */
  async finishWork(deadlineMs: number): Promise<number> {
    this.stopDraining = true
    this.releaseOpenBids('provider stopping')
    if (this.book.size === 0) return 0
    const ended = new Promise<void>((resolve) => {
      const off = this.book.onTransition(() =>
        queueMicrotask(() => {
          if (this.book.size > 0) return
          off()
          resolve()
        }),
      )
    })
    let timer: unknown
    const deadline = new Promise<void>((r) => (timer = this.c.clock.setTimeout(r, deadlineMs)))
    await Promise.race([ended, deadline])
    this.c.clock.clearTimeout(timer)
    return this.book.size
  }

  /**
   * Stops answering, cancels the runs in progress (their receipts, with the usage so far, are
   * delivered once, not retried), waits for them to end, then stops every machine: what was not
   * running stays stored where it was and goes on at the next start.
   */
  async stop(): Promise<void> {
    this.stopSweeper?.()
    this.stopClaims?.()
    this.capacityNews.stop()
    this.actor?.stop()
    this.actor = undefined
    this.stopping = true
    for (const a of this.book.inStates(RUNNING)) a.send({ type: 'CANCEL', reason: 'provider stopping' })
    await this.idle()
    await this.book.stop()
    await this.allocationActors.stop()
    this.archives.stop()
  }
}
