/**
 * The provider's side of one bid, as one xstate machine that drives it: from the reservation made
 * for a bid request to the release of everything the bid held. Messages from the requester are
 * events (`LOCK`, `SIGN`, `INVOKE`, `CANCEL`, `RELEASE`); the ledger operations, the run (input
 * staging and the executor), publishing the outputs and delivering the result are invoked actors,
 * supplied by the provider with `machine.provide` (tests swap them the same way). Every deadline
 * is an absolute time in the context, waited for by an invoked `deadline` actor on the injected
 * clock, so a machine restored after a restart keeps it. Spec: specs/state-machines.md ("Provider
 * bid and allocation").
 */
import { assign, fromCallback, fromPromise, sendTo, setup, type EventObject } from 'xstate'
import type { Clock } from '../../actors/clock.js'
import { codeOf } from '../../actors/errors.js'
import { notStarted } from '../executor/outputs.js'
import { hashOutputs } from '../workload/outputs.js'
import type {
  BidContext,
  BidEvent,
  BidState,
  DeadlineInput,
  DeliverInput,
  ExecuteCommand,
  ExecuteInput,
  HeartbeatInput,
  LedgerInput,
  PublishInput,
  PublishOutput,
  Allocated,
} from './bid-context.js'
import type { SlotInput } from './later-bid.js'
import {
  deadline,
  ending,
  heartbeat,
  outcome,
  OUTCOMES,
  RESUMABLE,
  stamp,
  targetOf,
  type DetailFrom,
} from './bid-states.js'

export type {
  Allocated,
  DeadlineInput,
  DeliverInput,
  ExecuteCommand,
  ExecuteInput,
  HeartbeatInput,
  LedgerInput,
  PublishInput,
  PublishOutput,
} from './bid-context.js'

/** The provider's time limits on a bid (specs/config.md). */
export interface BidTiming {
  /** A lock not followed by a contract within this is released. */
  contractWindowMs: number
  /** How long a lock waits (from the lock) for the contract's invocation. */
  lockTtlMs: number
  /** The budget of provisioning: staging the inputs, pulling the image, creating the container. */
  provisionTimeoutMs: number
}

/** How the machine is created: fresh for a new bid, or with `resume` set to go back to a stored state. */
export interface BidMachineInput {
  context: BidContext
}

const missing = (name: string) => () => Promise.reject(new Error(`bid machine: no ${name} actor provided`))

/**
 * The bid machine, its actors not yet provided (`provide` them: dms/provider/bid-actors.ts). The
 * clock stamps the history and computes the deadlines set by `LOCK` and `INVOKE`.
 */
export function createBidMachine(clock: Pick<Clock, 'now'>, timing: BidTiming) {
  const secs = (ms: number) => Math.round(ms / 1000)
  return setup({
    types: {
      context: {} as BidContext,
      events: {} as BidEvent,
      input: {} as BidMachineInput,
    },
    actors: {
      deadline: fromPromise<void, DeadlineInput>(missing('deadline')),
      lock: fromPromise<void, LedgerInput>(missing('lock')),
      allocate: fromPromise<Allocated, LedgerInput>(missing('allocate')),
      release: fromPromise<void, LedgerInput>(missing('release')),
      execute: fromCallback<ExecuteCommand, ExecuteInput>(() => {
        throw new Error('bid machine: no execute actor provided')
      }),
      heartbeat: fromCallback<EventObject, HeartbeatInput>(() => undefined),
      publish: fromPromise<PublishOutput, PublishInput>(missing('publish')),
      deliver: fromPromise<void, DeliverInput>(missing('deliver')),
      slot: fromPromise<void, SlotInput>(missing('slot')),
    },
    guards: {
      resumeIs: ({ context }, state: BidState) => context.resume === state,
      outcomeIs: ({ event }, status: string) =>
        (event as unknown as { output: PublishOutput }).output.result.status === status,
      settled: ({ context }) => context.freed === true && context.delivered === true,
      // The ledger may not start the entry now (a slot for later, or an overrun before it).
      notYet: ({ event }) => codeOf((event as { error?: unknown }).error) === 'INSUFFICIENT_RESOURCES',
      // The lock came with the contract's terms (folded). Restored mid-lock, it is a plain lock:
      // the requester got no countersignature, so the lock waits only the contract window.
      folded: ({ context }) => context.signing !== undefined && context.restoredIn !== 'locking',
    },
    actions: {
      stamp: assign(({ context, event }, p: { state: BidState; detail?: DetailFrom }) => {
        // A restored machine re-enters its stored state: that is no new step of its history.
        if (context.resume === p.state) return { resume: undefined }
        const detail =
          p.detail === 'event'
            ? (event as { detail?: string }).detail
            : p.detail === 'ending'
              ? context.ending
              : p.detail === 'result'
                ? (context.result?.reason ?? context.ending)
                : undefined
        return {
          history: [
            ...context.history,
            { state: p.state, at: clock.now(), ...(detail !== undefined ? { detail } : {}) },
          ],
        }
      }),
      note: assign(({ context, event }, p: { state: BidState }) => ({
        history: [
          ...context.history,
          { state: p.state, at: clock.now(), detail: (event as unknown as { detail: string }).detail },
        ],
      })),
      restored: assign(({ context }) => ({ restoredIn: context.resume })),
      lockDeadlines: assign(() => {
        const now = clock.now()
        return {
          lockedAt: now,
          contractBy: now + Math.min(timing.contractWindowMs, timing.lockTtlMs),
          invokeBy: now + timing.lockTtlMs,
        }
      }),
      refused: assign(({ event }) => {
        const err = (event as unknown as { error: unknown }).error
        const refusal = {
          code: codeOf(err),
          message: err instanceof Error ? err.message : String(err),
        }
        return { refusal, ending: `${refusal.code}: ${refusal.message}` }
      }),
      sign: assign(({ event }) => {
        const e = event as Extract<BidEvent, { type: 'SIGN' }>
        return { contractId: e.contractId, contractHash: e.contractHash }
      }),
      holdSign: assign(({ event }) => ({ signing: (event as Extract<BidEvent, { type: 'LOCK' }>).sign })),
      signHeld: assign(({ context }) => ({ ...context.signing!, signing: undefined })),
      dropSign: assign({ signing: undefined }),
      invoke: assign(({ event }) => {
        const e = event as Extract<BidEvent, { type: 'INVOKE' }>
        const now = clock.now()
        return {
          allocation: {
            ...e.allocation,
            diskBytes: 0,
            invokedAt: now,
            provisionBy: now + timing.provisionTimeoutMs,
          },
        }
      }),
      allocated: assign(({ context, event }) => {
        const { diskBytes, gpuIndices } = (event as unknown as { output: Allocated }).output
        return {
          allocation: {
            ...context.allocation!,
            diskBytes,
            ...(gpuIndices !== undefined && gpuIndices.length > 0 ? { gpuIndices } : {}),
          },
        }
      }),
      end: assign((_, p: { ending: string }) => ({ ending: p.ending })),
      endWith: assign(({ event }) => ({ ending: (event as unknown as { reason: string }).reason })),
      // Cancelled before the run started: nothing was allocated to show as an allocation.
      cancelBeforeRun: assign(({ event }) => ({
        ending: (event as unknown as { reason: string }).reason,
        allocation: undefined,
      })),
      staged: assign({ staged: true }),
      // Leaving `waiting`: provisioning gets its whole budget from now, and the run starts afresh
      // (nothing ran before, even if the machine was restored in `waiting`).
      unwait: assign(({ context }) => ({
        allocation: { ...context.allocation!, provisionBy: clock.now() + timing.provisionTimeoutMs },
        restoredIn: undefined,
      })),
      // Provisioning ran out of its budget: the allocation fails, saying where it stood.
      provisionTimedOut: assign(({ context }) => ({
        run: notStarted(
          'failed',
          -1,
          `provisioning did not finish within ${secs(timing.provisionTimeoutMs)} s: ${
            context.staged === true || context.allocation?.inputs.length === 0
              ? 'the container did not start'
              : 'the inputs were not staged'
          }`,
        ),
      })),
      ran: assign(({ event }) => ({ run: (event as Extract<BidEvent, { type: 'RAN' }>).result })),
      published: assign(({ event }) => {
        const out = (event as unknown as { output: PublishOutput }).output
        return { message: out.message, result: out.result, run: undefined }
      }),
      publishFailed: assign(({ context, event }) => ({
        result: {
          status: 'failed' as const,
          exitCode: context.run?.exitCode ?? -1,
          reason: `the result could not be published: ${String((event as { error?: unknown }).error)}`,
          outputsHash: hashOutputs([]),
          ...(context.run !== undefined ? { usage: context.run.usage } : {}),
        },
        run: undefined,
      })),
      cancelRun: sendTo('execute', ({ event }) => event as ExecuteCommand),
      freed: assign({ freed: true }),
      delivered: assign({ delivered: true }),
      // The final record keeps the summary, not the run's output.
      forget: assign({ message: undefined, run: undefined, resume: undefined, restoredIn: undefined }),
    },
  }).createMachine({
    id: 'bid',
    context: ({ input }) => input.context,
    initial: 'resume',
    states: {
      // A new bid starts `reserved`; a restored one goes back to the state it was stored in, where
      // its deadlines are waited for again and its actors run again (each one idempotent).
      resume: {
        always: [
          ...RESUMABLE.map((s) => ({
            guard: { type: 'resumeIs' as const, params: s },
            target: targetOf(s),
            actions: 'restored' as const,
          })),
          { target: 'reserved' },
        ],
      },
      reserved: {
        entry: stamp('reserved'),
        invoke: deadline('bidExpiry', (c) => c.bid.expiresAt, 'the bid expired unlocked'),
        on: {
          LOCK: { target: 'locking', actions: ['lockDeadlines', 'holdSign'] },
          RELEASE: { target: 'withdrawn', actions: 'endWith' },
        },
      },
      locking: {
        invoke: {
          id: 'lock',
          src: 'lock',
          input: ({ context }) => ({ bidId: context.bid.bidId, until: context.invokeBy }),
          // Folded: locked and contracted in one step (one stored snapshot), the history says both.
          onDone: [
            { guard: 'folded', target: 'contracted', actions: [stamp('locked'), 'signHeld'] },
            { target: 'locked', actions: 'dropSign' },
          ],
          onError: { target: 'expired', actions: ['refused', 'dropSign'] },
        },
      },
      locked: {
        entry: stamp('locked'),
        invoke: deadline(
          'contractDeadline',
          (c) => c.contractBy!,
          `no contract within ${secs(timing.contractWindowMs)} s of the lock`,
        ),
        on: {
          SIGN: { target: 'contracted', actions: 'sign' },
          RELEASE: { target: 'withdrawn', actions: 'endWith' },
        },
      },
      contracted: {
        entry: stamp('contracted'),
        invoke: deadline(
          'invokeDeadline',
          (c) => c.invokeBy!,
          `no invocation within ${secs(timing.lockTtlMs)} s of the lock`,
        ),
        on: {
          INVOKE: { target: 'allocating', actions: 'invoke' },
          CANCEL: { target: 'cancelled', actions: 'endWith' },
          RELEASE: { target: 'withdrawn', actions: 'endWith' },
        },
      },
      allocating: {
        invoke: {
          id: 'allocate',
          src: 'allocate',
          input: ({ context }) => ({
            bidId: context.bid.bidId,
            allocationId: context.allocation?.allocationId,
          }),
          onDone: { target: 'active', actions: 'allocated' },
          onError: [
            { guard: 'notYet', target: 'waiting' },
            { target: 'expired', actions: 'refused' },
          ],
        },
        on: { CANCEL: { target: 'cancelled', actions: 'cancelBeforeRun' } },
      },
      // Invoked before its slot could start (specs/state-machines.md): allocates as soon as the
      // ledger lets it, telling the requester it is alive meanwhile; past startBy it expires.
      waiting: {
        entry: stamp('waiting'),
        invoke: [
          {
            id: 'slot',
            src: 'slot',
            input: ({ context }) => ({
              bidId: context.bid.bidId,
              at: context.bid.earliestStart,
              startBy: context.allocation!.contract.terms.startBy,
              contractId: context.allocation!.contract.terms.contractId,
            }),
            onDone: { target: 'allocating', actions: 'unwait' },
            onError: { target: 'expired', actions: 'refused' },
          },
          heartbeat('waiting'),
        ],
        on: { CANCEL: { target: 'cancelled', actions: 'cancelBeforeRun' } },
      },
      // The run, from staging its inputs to the end of its container: one `execute` actor.
      active: {
        invoke: {
          id: 'execute',
          src: 'execute',
          input: ({ context }) => ({
            bidId: context.bid.bidId,
            allocation: context.allocation!,
            requester: context.requester,
            restoredIn: context.restoredIn,
          }),
        },
        on: {
          RAN: { target: 'publishing', actions: 'ran' },
          CANCEL: { actions: 'cancelRun' },
        },
        initial: 'provisioning',
        states: {
          provisioning: {
            entry: stamp('provisioning', 'event'),
            invoke: [
              {
                id: 'provisionDeadline',
                src: 'deadline',
                input: ({ context }) => ({ at: context.allocation!.provisionBy }),
                onDone: { target: '#bid.publishing', actions: 'provisionTimedOut' },
              },
              heartbeat('provisioning'),
            ],
            on: {
              STAGED: { actions: ['staged', { type: 'note', params: { state: 'provisioning' } }] },
              STARTED: 'running',
            },
          },
          running: {
            entry: stamp('running', 'event'),
            invoke: heartbeat('running'),
            on: {
              STARTED: { actions: { type: 'note', params: { state: 'running' } } },
              AFRESH: 'provisioning',
            },
          },
        },
      },
      publishing: {
        entry: stamp('publishing'),
        invoke: [
          {
            id: 'publish',
            src: 'publish',
            input: ({ context }) => ({
              allocation: context.allocation!,
              requester: context.requester,
              run: context.run!,
            }),
            onDone: OUTCOMES.map((s) => ({
              guard: { type: 'outcomeIs' as const, params: s },
              target: s,
              actions: 'published' as const,
            })),
            onError: { target: 'failed', actions: 'publishFailed' },
          },
          heartbeat('publishing'),
        ],
      },
      completed: outcome('completed'),
      failed: outcome('failed'),
      timed_out: outcome('timed_out'),
      cancelled: outcome('cancelled'),
      expired: ending('expired'),
      withdrawn: ending('withdrawn'),
      released: { type: 'final', entry: [stamp('released'), 'forget'] },
    },
  })
}

export type BidMachine = ReturnType<typeof createBidMachine>
