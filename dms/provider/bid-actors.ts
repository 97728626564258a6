/**
 * The bid machine's actors over the provider's parts: the deadlines on the injected clock, the
 * ledger operations, the heartbeat, the run, publishing and the delivery of the result. Each takes
 * the AbortSignal xstate gives it (the state was left, or the provider stops). `provideBidActors`
 * gives them to the machine; tests give their own with `machine.provide`.
 */
import type { Logger } from 'pino'
import { fromCallback, fromPromise, type EventObject } from 'xstate'
import { delay, every, type Clock } from '../../actors/clock.js'
import type { KeyPair } from '../../actors/identity.js'
import { exponential, retry } from '../../actors/retry.js'
import type { Actor } from '../../actors/system.js'
import type { BlobService } from '../blobs/service.js'
import type { SignedContract } from '../contracts/model.js'
import type { Runner } from '../executor/engine.js'
import { W } from '../protocol/behaviours.js'
import { HEARTBEAT, type JobResult, type JobUpdate } from '../protocol/messages.js'
import type { Handle } from '../../actors/envelope.js'
import { clip } from './publish.js'
import type { ResourceLedger } from '../resources/ledger.js'
import { waitForSlot, type SlotInput } from './later-bid.js'
import { executeActor } from './allocation-run.js'
import type { LiveUsageBoard } from './live-usage.js'
import type {
  Allocated,
  BidMachine,
  DeadlineInput,
  DeliverInput,
  HeartbeatInput,
  LedgerInput,
} from './bid-machine.js'
import { publishActor } from './publish.js'
import type { KeptArchives } from './kept-archives.js'

export interface BidActorDeps {
  ledger: Pick<ResourceLedger, 'lock' | 'allocate' | 'release' | 'canStart' | 'onFreed'>
  executor: Runner
  blobs: BlobService
  /** The archives kept for requesters, each with its release deadline (kept-archives.ts). */
  archives?: Pick<KeptArchives, 'published'>
  /** Signs receipts (the node key). */
  key: KeyPair
  clock: Clock
  log: Logger
  /** Each running allocation's usage so far (heartbeats carry it). */
  usage?: LiveUsageBoard
  /** Holds `inputs/<allocationId>/`, the staged inputs of running allocations. */
  workDir: string
  /** The allocation's own actor (`alloc/<id>`): its updates, logs and result come from it. */
  actorFor(allocationId: string): Actor
  /** Sends an allocation's update after the ones reported before it (best effort). */
  sendUpdate(allocationId: string, to: Handle, update: JobUpdate): Promise<void>
  /** Whether the provider is stopping: a result that cannot be delivered is not retried then. */
  stopping(): boolean
  /**
   * Keeps a result until its contract settles, for `/dms/job/result-again`, and books its
   * receipt (outcomes.ts); done before the result is sent. Not given: nothing is kept.
   */
  keepResult?(contractId: string, requester: string, message: JobResult): Promise<void>
  /** The run's start note to the contract-db, acknowledged before the container starts. */
  startNote?(contract: SignedContract, signal: AbortSignal): Promise<void>
  /** Whether containers may use the network (allocation-run.ts). @default false */
  allowNetwork?: boolean
}

export interface BidActorInit {
  /** How often a live allocation tells its requester so (liveness). @default 2000 */
  heartbeatMs?: number
}

/** Resolves at `at` on the clock (at once when it has passed). */
export const deadlineActor = (clock: Clock) =>
  fromPromise<void, DeadlineInput>(({ input, signal }) =>
    delay(Math.max(0, input.at - clock.now()), { clock, signal }),
  )

/** Sends a heartbeat update every `ms` while the allocation is in the state given. */
export const heartbeatActor = (d: Pick<BidActorDeps, 'clock' | 'actorFor' | 'usage'>, ms: number) =>
  fromCallback<EventObject, HeartbeatInput>(({ input }) =>
    every(d.clock, ms, () => {
      if (input.allocationId === '') return
      // While it runs, each heartbeat carries the usage so far (specs/protocol.md, "Live usage").
      const usage = d.usage?.get(input.allocationId)
      const update: JobUpdate = {
        jobId: input.jobId,
        allocationId: input.allocationId,
        state: input.state,
        at: d.clock.now(),
        detail: HEARTBEAT,
        ...(usage !== undefined ? { usage } : {}),
      }
      void d
        .actorFor(input.allocationId)
        .send(input.requester, W.update, update, { ttlMs: 10_000 })
        .catch(() => {})
    }),
  )

/**
 * Delivers the result, retrying with backoff (1, 2, 4... s, about a minute in all) while the
 * requester is unreachable (it may be restarting), unless the provider is stopping. The result is
 * kept first (`keepResult`), so a requester killed right after it arrived can ask for it again.
 */
export const deliverActor = (
  d: Pick<BidActorDeps, 'clock' | 'log' | 'actorFor' | 'stopping' | 'sendUpdate' | 'keepResult'>,
) =>
  fromPromise<void, DeliverInput>(async ({ input, signal }) => {
    const { message, allocationId, contractId } = input
    if (allocationId === undefined) return
    if (message !== undefined && contractId !== undefined && d.keepResult !== undefined)
      await d.keepResult(contractId, input.requester.peer, message).catch((err: unknown) => {
        d.log.warn({ err, contractId }, 'result not kept')
      })
    if (input.update !== undefined)
      await d.sendUpdate(allocationId, input.requester, {
        ...input.update,
        detail: clip(input.update.detail),
      })
    if (message === undefined) return
    try {
      await retry(
        () => d.actorFor(allocationId).send(input.requester, W.result, message, { ttlMs: 120_000 }),
        {
          attempts: 6,
          backoffMs: exponential(1000),
          retryIf: () => !d.stopping(),
          clock: d.clock,
          signal,
        },
      )
    } catch (err) {
      if (signal.aborted) throw err
      d.log.warn({ err, allocationId }, 'result not delivered')
    }
  })

/** The bid machine with every actor over the provider's parts. */
export function provideBidActors(machine: BidMachine, d: BidActorDeps, init: BidActorInit = {}): BidMachine {
  return machine.provide({
    actors: {
      deadline: deadlineActor(d.clock),
      lock: fromPromise<void, LedgerInput>(async ({ input }) => {
        await d.ledger.lock(input.bidId, { expiresAt: input.until })
      }),
      allocate: fromPromise<Allocated, LedgerInput>(async ({ input }) => {
        const entry = await d.ledger.allocate(input.bidId, input.allocationId)
        return {
          diskBytes: entry.resources.diskBytes,
          ...(entry.gpuIndices !== undefined ? { gpuIndices: entry.gpuIndices } : {}),
        }
      }),
      release: fromPromise<void, LedgerInput>(async ({ input }) => {
        await d.ledger.release(input.bidId)
      }),
      execute: executeActor(d),
      heartbeat: heartbeatActor(d, init.heartbeatMs ?? 2000),
      publish: publishActor(d),
      deliver: deliverActor(d),
      slot: fromPromise<void, SlotInput>(({ input, signal }) => waitForSlot(d, input, signal)),
    },
  })
}
