/**
 * The bid machine's building blocks shared by several of its states (bid-machine.ts): the
 * deadlines, the history stamp, the heartbeat, and the two kinds of ending.
 */
import type {
  BidContext,
  BidState,
  DeadlineInput,
  DeliverInput,
  HeartbeatInput,
  LedgerInput,
} from './bid-context.js'

export const OUTCOMES = ['completed', 'failed', 'timed_out', 'cancelled'] as const
/** The states a stored machine goes back to at restore (`released` is final: nothing to restore). */
export const RESUMABLE: readonly BidState[] = [
  'reserved',
  'locking',
  'locked',
  'contracted',
  'allocating',
  'waiting',
  'provisioning',
  'running',
  'publishing',
  ...OUTCOMES,
  'expired',
  'withdrawn',
]
export const targetOf = (s: BidState): string => (s === 'provisioning' || s === 'running' ? `active.${s}` : s)

/** Where a history entry's detail comes from. */
export type DetailFrom = 'event' | 'ending' | 'result'

// Waits for an absolute time of the context; `ending` says why the bid ends when it passes.
export const deadline = (id: string, at: (c: BidContext) => number, ending: string) => ({
  id,
  src: 'deadline' as const,
  input: ({ context }: { context: BidContext }): DeadlineInput => ({ at: at(context) }),
  onDone: { target: 'expired' as const, actions: { type: 'end' as const, params: { ending } } },
})
export const stamp = (state: BidState, detail?: DetailFrom) => ({
  type: 'stamp' as const,
  params: { state, detail },
})
export const heartbeat = (state: BidState) => ({
  id: 'heartbeat',
  src: 'heartbeat' as const,
  input: ({ context }: { context: BidContext }): HeartbeatInput => ({
    // '' (no heartbeat) for an outcome reached without an allocation (cancelled before the run).
    allocationId: context.allocation?.allocationId ?? '',
    jobId: context.bid.jobId,
    requester: context.requester,
    state,
  }),
})
export const release = {
  id: 'release',
  src: 'release' as const,
  input: ({ context }: { context: BidContext }): LedgerInput => ({ bidId: context.bid.bidId }),
}
// An ending after an invocation: the ledger entry is released and the result delivered (the
// outcome's update first, then the result), both at once (a requester that cannot be reached
// does not hold the resources), then `released`. Heartbeats go on until the result is delivered,
// so a requester restarted meanwhile keeps hearing from its provider between delivery attempts.
export const outcome = (state: BidState) => ({
  entry: stamp(state, 'result'),
  invoke: [
    heartbeat(state),
    { ...release, onDone: { actions: 'freed' as const }, onError: { actions: 'freed' as const } },
    {
      id: 'deliver',
      src: 'deliver' as const,
      input: ({ context }: { context: BidContext }): DeliverInput => {
        const a = context.allocation
        const last = context.history.at(-1)
        return {
          allocationId: a?.allocationId,
          requester: context.requester,
          message: context.message,
          contractId: context.contractId,
          ...(a !== undefined && last !== undefined
            ? {
                update: {
                  jobId: context.bid.jobId,
                  allocationId: a.allocationId,
                  state,
                  at: last.at,
                  ...(last.detail !== undefined ? { detail: last.detail } : {}),
                },
              }
            : {}),
        }
      },
      onDone: { actions: 'delivered' as const },
      onError: { actions: 'delivered' as const },
    },
  ],
  // The requester fetched the result itself (`/dms/job/result-again`): it is delivered.
  on: { FETCHED: { actions: 'delivered' as const } },
  always: { guard: 'settled' as const, target: 'released' as const },
})
// An ending without a run: the ledger entry is released, then `released`.
export const ending = (state: BidState) => ({
  entry: stamp(state, 'ending'),
  invoke: { ...release, onDone: 'released' as const, onError: 'released' as const },
})
