/**
 * The contract's life in the contract-db (xstate v5), the machine that drives it. Spec:
 * specs/contract-db.md ("States") and specs/state-machines.md.
 *
 *   proposed --VERIFY--> locking --(written)--> active
 *   active --SETTLE | TERMINATE | CLAIM | EXPIRE--> settling --(written)--> settled | terminated
 *     | claimed | expired
 *   claimed --DISPUTE (once)--> disputing --(written)--> claimed
 *   active --START (once)--> starting --(written)--> active (the provider's start note)
 *
 * A transition that moves money plans its `Change` (changes.ts: the record in the state it
 * reaches, and the account moves) and goes to a writing state (tag `writing`), which invokes the
 * `commit` effect: one atomic batch of the record and the moves. Once it is written the contract
 * rests in the state reached; if the write fails nothing was written and the contract is back
 * where it was, the failure in `context.failure`. The resting states are the persisted ones: the
 * stored record is the context, its `state` the state value, restored with `resolveState` (no
 * effect runs on a restore, so a restore is idempotent in every state).
 *
 * Adding a state: name it in `StoredState` (records.ts), give it the events it accepts, and let
 * each transition that changes the record plan a `Change` into a writing state whose `onDone`
 * lands in it (as `expired`: `active --EXPIRE--> settling` planning a full refund, and one more
 * `reaches(expired)` branch on `settling`'s `onDone`).
 */
import { assertEvent, assign, fromPromise, setup } from 'xstate'
import type { Clock } from '../../actors/clock.js'
import type { ContractProof, SignedContract } from '../contracts/model.js'
import {
  closeChange,
  disputeChange,
  lockChange,
  startChange,
  type DisputeFacts,
  type StartFacts,
  type Change,
  type CloseFacts,
  type ContractData,
  type SignSettlement,
} from './changes.js'
import type { ContractRecord, StoredState } from './records.js'

/** The machine's states: the stored ones, and those that last while a change is written. */
export type ContractState = StoredState | 'proposed' | 'locking' | 'settling' | 'disputing' | 'starting'

/** The tag of the states in which a change is being written. */
export const WRITING = 'writing'

export type ContractEvent = { type: 'VERIFY' } | CloseFacts | DisputeFacts | StartFacts

/** A contract that passed verification, before its escrow is locked. */
export interface ContractInput {
  contract: SignedContract
  proof: ContractProof
  /** When its escrow is locked (the proof's issuedAt). */
  activatedAt: number
  /** From then on the provider may claim (deadlines.ts); also in the proof. */
  settleBy?: number
}

export interface ContractContext {
  /** The stored record without its state (the state is the machine's). */
  data: ContractData
  /** The change being written (in a `writing` state). */
  next?: Change
  /** Why the last change was not written; never stored. */
  failure?: Error
}

/** The machine's side effects, supplied by the service (fakes in tests). */
export interface ContractEffects {
  /** Writes the change's record and its moves in one atomic batch; writes nothing if it fails. */
  commit(change: Change, signal: AbortSignal): Promise<void>
  /** Tells the party that did not close the contract (best effort, never throws). */
  notify(closed: ContractRecord): void
  signSettlement: SignSettlement
}

export function createContractMachine(effects: ContractEffects, clock: Pick<Clock, 'now'>) {
  return setup({
    types: {
      context: {} as ContractContext,
      events: {} as ContractEvent,
      input: {} as ContractInput,
    },
    actors: {
      // async: a commit that throws at once fails like one that rejects.
      commit: fromPromise<void, Change>(async ({ input, signal }) => effects.commit(input, signal)),
    },
    actions: {
      planLock: assign({
        next: ({ context }) => lockChange(context.data, clock.now()),
        failure: undefined,
      }),
      planClose: assign({
        next: ({ context, event }) => {
          assertEvent(event, ['SETTLE', 'TERMINATE', 'CLAIM', 'EXPIRE'])
          return closeChange(context.data, event, clock.now(), effects.signSettlement)
        },
        failure: undefined,
      }),
      planDispute: assign({
        next: ({ context, event }) => {
          assertEvent(event, 'DISPUTE')
          return disputeChange(context.data, event, clock.now())
        },
        failure: undefined,
      }),
      planStart: assign({
        next: ({ context, event }) => {
          assertEvent(event, 'START')
          return startChange(context.data, event, clock.now())
        },
        failure: undefined,
      }),
      adopt: assign({
        data: ({ context }) => dataOf(context.next!.record),
        next: undefined,
      }),
      failed: assign({
        next: undefined,
        failure: ({ event }) => asError((event as unknown as { error: unknown }).error),
      }),
      notify: ({ context }) => effects.notify(context.next!.record),
    },
    guards: {
      reaches: ({ context }, to: StoredState) => context.next?.to === to,
      undisputed: ({ context }) => context.data.dispute === undefined,
      notStarted: ({ context }) => context.data.started === undefined,
    },
  }).createMachine({
    id: 'contract',
    context: ({ input }) => ({ data: { ...input, history: [] } }),
    initial: 'proposed',
    states: {
      // Verified by the service; nothing is stored yet (a refused verification stores nothing).
      proposed: { on: { VERIFY: { target: 'locking', actions: 'planLock' } } },
      locking: {
        tags: [WRITING],
        invoke: {
          src: 'commit',
          input: ({ context }) => context.next!,
          onDone: { target: 'active', actions: 'adopt' },
          onError: { target: 'proposed', actions: 'failed' },
        },
      },
      active: {
        on: {
          SETTLE: { target: 'settling', actions: 'planClose' },
          TERMINATE: { target: 'settling', actions: 'planClose' },
          // Past settleBy (checked by the handler): the provider's claim, or the contract-db's expiry.
          CLAIM: { target: 'settling', actions: 'planClose' },
          EXPIRE: { target: 'settling', actions: 'planClose' },
          // The provider's start note, recorded once (a repeated note is answered by the handler).
          START: { guard: 'notStarted', target: 'starting', actions: 'planStart' },
        },
      },
      starting: {
        tags: [WRITING],
        invoke: {
          src: 'commit',
          input: ({ context }) => context.next!,
          onDone: { target: 'active', actions: 'adopt' },
          onError: { target: 'active', actions: 'failed' },
        },
      },
      settling: {
        tags: [WRITING],
        invoke: {
          src: 'commit',
          input: ({ context }) => context.next!,
          onDone: [
            {
              guard: { type: 'reaches', params: 'settled' },
              target: 'settled',
              actions: ['notify', 'adopt'],
            },
            {
              guard: { type: 'reaches', params: 'claimed' },
              target: 'claimed',
              actions: ['notify', 'adopt'],
            },
            {
              guard: { type: 'reaches', params: 'expired' },
              target: 'expired',
              actions: ['notify', 'adopt'],
            },
            { target: 'terminated', actions: ['notify', 'adopt'] },
          ],
          onError: { target: 'active', actions: 'failed' },
        },
      },
      settled: { type: 'final' },
      terminated: { type: 'final' },
      expired: { type: 'final' },
      // Paid on the provider's claim; its requester may dispute it once (within the window, checked
      // by the handler): the dispute is recorded for the operator, no money moves.
      claimed: {
        on: { DISPUTE: { guard: 'undisputed', target: 'disputing', actions: 'planDispute' } },
      },
      disputing: {
        tags: [WRITING],
        invoke: {
          src: 'commit',
          input: ({ context }) => context.next!,
          onDone: { target: 'claimed', actions: 'adopt' },
          onError: { target: 'claimed', actions: 'failed' },
        },
      },
    },
  })
}

export type ContractMachine = ReturnType<typeof createContractMachine>

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)))

/** The machine's context of a stored record. */
export function dataOf(rec: ContractRecord): ContractData {
  const { state: _state, ...data } = rec
  return data
}
