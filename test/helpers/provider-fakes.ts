/**
 * Fakes for unit tests of the provider's bid machine and handlers, named as such: a ledger that
 * records its calls, runs the test finishes by hand, deliveries it records. Time is a ManualClock
 * the test advances; the machine, the bid book and its level database are real.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fromCallback, fromPromise, type EventObject } from 'xstate'
import type { ManualClock } from '../../actors/clock.js'
import type { Bid, SignedContract } from '../../dms/contracts/model.js'
import type { ExecutionResult } from '../../dms/executor/executor.js'
import { notStarted } from '../../dms/executor/outputs.js'
import { silentLogger } from '../../dms/log.js'
import { deadlineActor } from '../../dms/provider/bid-actors.js'
import { BidBook } from '../../dms/provider/bid-book.js'
import type { BidContext, BidEvent } from '../../dms/provider/bid-context.js'
import {
  createBidMachine,
  type BidTiming,
  type DeliverInput,
  type ExecuteCommand,
  type ExecuteInput,
  type HeartbeatInput,
  type LedgerInput,
  type PublishInput,
  type PublishOutput,
} from '../../dms/provider/bid-machine.js'
import { waitForSlot, type SlotInput } from '../../dms/provider/later-bid.js'
import type { RetentionInit } from '../../dms/provider/bid-store.js'
import { hashOutputs } from '../../dms/workload/outputs.js'
import type { ResourceLedger } from '../../dms/resources/ledger.js'
import { openDb, type Db } from '../../dms/store/db.js'
import { plainNeeds } from './needs.js'

export const REQUESTER = '12D3KooWRequesterPeerRequesterPeerRequesterPeerRe'
export const TIMING: BidTiming = { contractWindowMs: 15_000, lockTtlMs: 60_000, provisionTimeoutMs: 300_000 }

export function testBid(now: number, over: Partial<Bid> = {}): Bid {
  return {
    bidId: 'bid-1',
    jobId: 'job-1',
    provider: '12D3KooWProviderPeer',
    resources: { cpu: 0.5, memoryBytes: 64 * 1024 * 1024, diskBytes: 0, gpus: 0 },
    image: 'dms-test:1',
    maxDurationSeconds: 60,
    pricePerHour: 100,
    minJobPrice: 1,
    total: 2,
    earliestStart: now,
    expectedFinish: now + 60_000,
    expiresAt: now + 30_000,
    resourcesReserved: true,
    signature: 'sig',
    ...over,
  }
}

/** A new bid's context, as the bid-request handler creates it. */
export function bidContext(now: number, over: Partial<Bid> = {}, requester = REQUESTER): BidContext {
  const bid = testBid(now, over)
  return {
    bid,
    request: {
      jobId: bid.jobId,
      workloadNeeds: plainNeeds(bid.image, bid.resources),
      maxDurationSeconds: 60,
      maxPrice: 1000,
      deadline: now + 3000,
      exclude: [],
    },
    requester: { publicKey: new Uint8Array(32), peer: requester, inbox: `job/${bid.jobId}`, addrs: [] },
    held: { ...bid.resources, diskBytes: 256 * 1024 * 1024 },
    history: [],
  }
}

export function contractFor(bid: Bid, contractId = 'contract-1'): SignedContract {
  return {
    terms: {
      contractId,
      jobId: bid.jobId,
      bidId: bid.bidId,
      requester: { peer: REQUESTER, publicKey: 'k' },
      provider: { peer: bid.provider, publicKey: 'k' },
      contractDb: '12D3KooWContractDb',
      resources: bid.resources,
      image: bid.image,
      maxDurationSeconds: bid.maxDurationSeconds,
      escrow: bid.total,
      bid,
      createdAt: bid.earliestStart,
      expiresAt: bid.earliestStart + 60_000,
    },
    requesterSignature: 'r',
    providerSignature: 'p',
  }
}

export const completedRun = (): ExecutionResult => ({
  status: 'completed',
  exitCode: 0,
  stdout: 'hi\n',
  stderr: '',
  truncated: false,
  outputs: [],
  outputsHash: hashOutputs([]),
  usage: { wallSeconds: 1, cpuSeconds: 0.5, peakMemoryBytes: 1 },
})

/** A run the test drives: the machine's `execute` actor, held until the test says. */
export interface HeldRun {
  input: ExecuteInput
  cancels: string[]
  send(e: BidEvent): void
  started(detail?: string): void
  finish(result?: ExecutionResult): void
}

/** What the fake actors did, in order. */
export class Fakes {
  /** A real ledger the ledger actors act on (and record); without one they only record. */
  constructor(private readonly real?: Pick<ResourceLedger, 'lock' | 'allocate' | 'release'>) {}
  readonly calls: string[] = []
  readonly runs = new Map<string, HeldRun>()
  readonly delivered: DeliverInput[] = []
  /** Heartbeats started (`+state`) and stopped (`-state`), in order. */
  readonly heartbeats: string[] = []
  /** When set, deliveries wait for it (a requester that cannot be reached yet). */
  holdDelivery?: Promise<void>
  /** Codes the next ledger operations of that kind fail with. */
  readonly failNext: Partial<Record<'lock' | 'allocate', string>> = {}
  /** When set, locks never finish (a provider stopped mid-lock). */
  holdLocks = false
  /** The ledger a waiting allocation asks (`canStart`) and hears releases from (`free()`). */
  readonly slots = {
    open: false,
    listeners: new Set<() => void>(),
    canStart: (): boolean => this.slots.open,
    onFreed: (fn: () => void) => {
      this.slots.listeners.add(fn)
      return () => this.slots.listeners.delete(fn)
    },
    /** Lets the waiting entry start, as a release in the ledger would. */
    free: (): void => {
      this.slots.open = true
      for (const fn of [...this.slots.listeners]) fn()
    },
  }

  private ledger(op: 'lock' | 'allocate' | 'release') {
    return fromPromise<unknown, LedgerInput>(({ input }) => {
      this.calls.push(`${op} ${input.bidId}${input.until !== undefined ? ` until ${input.until}` : ''}`)
      if (op === 'lock' && this.holdLocks) return new Promise<never>(() => undefined)
      const code = op === 'release' ? undefined : this.failNext[op]
      if (code !== undefined) {
        delete this.failNext[op as 'lock' | 'allocate']
        return Promise.reject(Object.assign(new Error(`${op} failed`), { code }))
      }
      const real = this.real
      if (real === undefined)
        return Promise.resolve(op === 'allocate' ? { diskBytes: 256 * 1024 * 1024 } : undefined)
      if (op === 'lock') return real.lock(input.bidId, { expiresAt: input.until }).then(() => undefined)
      if (op === 'allocate')
        return real.allocate(input.bidId).then((e) => ({
          diskBytes: e.resources.diskBytes,
          ...(e.gpuIndices !== undefined ? { gpuIndices: e.gpuIndices } : {}),
        }))
      return real.release(input.bidId).then(() => undefined)
    })
  }

  /** The machine with these fakes as its actors and `clock` for its deadlines. */
  machine(clock: ManualClock, timing: BidTiming = TIMING) {
    return createBidMachine(clock, timing).provide({
      actors: {
        deadline: deadlineActor(clock),
        lock: this.ledger('lock') as never,
        allocate: this.ledger('allocate') as never,
        release: this.ledger('release') as never,
        execute: fromCallback<ExecuteCommand, ExecuteInput>(({ input, sendBack, receive }) => {
          const run: HeldRun = {
            input,
            cancels: [],
            send: (e) => sendBack(e),
            started: (detail) => sendBack({ type: 'STARTED', ...(detail ? { detail } : {}) }),
            finish: (result = completedRun()) => sendBack({ type: 'RAN', result }),
          }
          receive((e) => {
            run.cancels.push(e.reason)
            run.finish(notStarted('cancelled', -1, e.reason))
          })
          this.calls.push(
            `execute ${input.allocation.allocationId}${input.restoredIn ? ` restored in ${input.restoredIn}` : ''}`,
          )
          this.runs.set(input.allocation.allocationId, run)
        }),
        heartbeat: fromCallback<EventObject, HeartbeatInput>(({ input }) => {
          this.heartbeats.push(`+${input.state}`)
          return () => this.heartbeats.push(`-${input.state}`)
        }),
        publish: fromPromise<PublishOutput, PublishInput>(({ input }) => {
          this.calls.push(`publish ${input.run.status}`)
          const { status, exitCode, reason, outputsHash } = input.run
          return Promise.resolve({
            message: { jobId: input.allocation.contract.terms.jobId, outputs: [] } as never,
            result: { status, exitCode, ...(reason !== undefined ? { reason } : {}), outputsHash },
          })
        }),
        deliver: fromPromise<void, DeliverInput>(async ({ input }) => {
          await this.holdDelivery
          if (input.message !== undefined) this.delivered.push(input)
        }),
        // The real wait, over the fake ledger above and the test's clock.
        slot: fromPromise<void, SlotInput>(({ input, signal }) =>
          waitForSlot({ ledger: this.slots, clock }, input, signal),
        ),
      },
    })
  }
}

/** A bid book on a real level database in a temp dir, over `fakes`; `close` removes it all. */
export async function testBook(
  clock: ManualClock,
  fakes: Fakes,
  opts: { timing?: BidTiming; retention?: RetentionInit; dir?: string; db?: Db } = {},
): Promise<{ book: BidBook; db: Db; dir: string; close(): Promise<void> }> {
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'dms-bids-')))
  const db = opts.db ?? (await openDb(join(dir, 'db')))
  const book = new BidBook(
    { db, clock, log: silentLogger, machine: fakes.machine(clock, opts.timing) },
    opts.retention,
  )
  await book.start()
  return {
    book,
    db,
    dir,
    async close() {
      await book.stop()
      if (opts.db === undefined) await db.close()
      if (opts.dir === undefined) await rm(dir, { recursive: true, force: true })
    },
  }
}
