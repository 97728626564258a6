/**
 * The requester's job machine (xstate v5). Spec: specs/state-machines.md.
 * bidding -> selecting -> requesting -> contracting -> invoking -> running -> verifying -> settling
 * -> completed, with failed. A declined job request, or a contract refused before the contract-db
 * locked anything, returns to selecting for the next bid.
 * The machine is pure and drives the job: every side effect is a step (an invoked promise actor
 * taking an AbortSignal), one file each in steps/ (built per job by steps/index.ts), so tests can
 * swap them.
 */
import { assign, fromPromise, setup } from 'xstate'
import type { Clock } from '../../actors/clock.js'
import { codeOf, DmsError } from '../../actors/errors.js'
import type { JobError, JobRecord, JobState } from './job-record.js'
import { rankBids } from './select.js'

export type Patch = Partial<JobRecord>
export type Step = (job: JobRecord, signal: AbortSignal) => Promise<Patch>

export interface JobSteps {
  collectBids: Step
  requestLock: Step
  closeContract: Step
  invoke: Step
  awaitResult: Step
  verify: Step
  settle: Step
  /** Stops the run at the provider (if any) and closes the contract for the time used. */
  cancel: Step
}

/** An error a step throws to fail the job with a stable reason code. */
export class JobFailure extends DmsError {
  /** Merged into the record with the error (e.g. the settlement of a terminated contract). */
  patch?: Patch
  constructor(
    code: string,
    message: string,
    readonly extra: Partial<JobError> = {},
  ) {
    super(code, message)
  }
}

/**
 * The winning bid could not be contracted and nothing is locked at the contract-db (the provider
 * refused to countersign, or the contract-db refused the contract): the next bid is tried.
 */
export class ContractRefusal extends JobFailure {
  constructor(
    code: string,
    message: string,
    readonly bid: { provider: string; bidId: string },
  ) {
    super(code, message)
  }
}

const toJobError = (err: unknown): JobError => {
  const e = err as { message?: unknown; extra?: Partial<JobError> }
  return {
    code: codeOf(err),
    message: String(e.message ?? err),
    ...(e.extra ?? {}),
  }
}

export function createJobMachine(steps: JobSteps, clock: Pick<Clock, 'now'>) {
  const step = (name: keyof JobSteps) =>
    fromPromise<Patch, JobRecord>(({ input, signal }) => steps[name](input, signal))
  const stamp = (state: JobState) => ({ type: 'stamp' as const, params: { state } })
  // Typed loosely on purpose: xstate's per-src inference does not follow a helper like this one;
  // the machine is covered by test/unit/orchestrator/job-machine.spec.ts.
  const invokeStep = (name: keyof JobSteps, next: JobState) =>
    ({
      invoke: {
        src: name,
        input: ({ context }: { context: JobRecord }) => context,
        onDone: { target: next, actions: 'merge' },
        onError: { target: 'failed', actions: 'fail' },
      },
    }) as object
  // A step after the contract whose failure is the provider's fault: bid again while retries last.
  const retryingStep = (name: keyof JobSteps, next: JobState) =>
    ({
      invoke: {
        src: name,
        input: ({ context }: { context: JobRecord }) => context,
        onDone: { target: next, actions: 'merge' },
        onError: [
          { guard: 'retriesLeft', target: 'bidding', actions: 'retry' },
          { target: 'failed', actions: 'fail' },
        ],
      },
    }) as object

  return setup({
    types: { context: {} as JobRecord, input: {} as JobRecord },
    actors: {
      collectBids: step('collectBids'),
      requestLock: step('requestLock'),
      closeContract: step('closeContract'),
      invoke: step('invoke'),
      awaitResult: step('awaitResult'),
      verify: step('verify'),
      settle: step('settle'),
      cancel: step('cancel'),
    },
    actions: {
      merge: assign(({ event }) => (event as unknown as { output: Patch }).output),
      fail: assign(({ event }) => {
        const err = (event as unknown as { error: unknown }).error
        return { ...((err as { patch?: Patch })?.patch ?? {}), error: toJobError(err) }
      }),
      stamp: assign(({ context }, params: { state: JobState }) => ({
        history: [...context.history, { state: params.state, at: clock.now() }],
      })),
      choose: assign(({ context }) => {
        const [best, why] = rankBids(
          context.bids.filter((b) => !context.tried.includes(b.bidId)),
          {
            maxPrice: context.spec.maxPrice,
            maxDurationSeconds: context.spec.maxDurationSeconds,
            reliability: context.reliability ?? {},
            now: clock.now(),
          },
        )[0]
        return { winner: { bidId: best.bidId, provider: best.provider, why } }
      }),
      // A provider fault with retries left: record the attempt, exclude the provider, bid again.
      retry: assign(({ context, event }) => {
        const err = (event as unknown as { error: unknown }).error
        const patch = (err as { patch?: Patch })?.patch ?? {}
        const provider = context.winner?.provider as string
        return {
          attempts: [
            ...(context.attempts ?? []),
            {
              provider,
              contractId: context.contract?.terms.contractId,
              error: toJobError(err),
              settlement: patch.settlement,
              at: clock.now(),
            },
          ],
          excluded: [...(context.excluded ?? []), provider],
          bids: [],
          declines: [],
          tried: [],
          refusals: [],
          winner: undefined,
          contract: undefined,
          proof: undefined,
          allocationId: undefined,
          updates: [],
          result: undefined,
          lastSeenAt: undefined,
        }
      }),
      noBids: assign(({ context }) => {
        const refusals = context.refusals ?? []
        const contracting = refusals.some((r) => r.step === 'contract')
        const told = refusals.map((r) => `${r.provider.slice(-8)}: ${r.code}: ${r.message}`).join(' | ')
        return {
          error: {
            code:
              context.bids.length === 0
                ? 'NO_BIDS'
                : contracting
                  ? 'CONTRACT_REFUSED'
                  : 'NO_PROVIDER_ACCEPTED',
            message:
              context.bids.length === 0
                ? context.declines.length === 0
                  ? `no provider answered the bid request (${context.providersConnected ?? 0} providers connected)`
                  : `no provider bid: ${context.declines.map((d) => `${d.provider.slice(-8)}: ${d.reasons.join('; ')}`).join(' | ')}`
                : contracting
                  ? `no bid could be contracted: ${told}`
                  : 'every bidding provider declined the job request',
            declines: context.declines,
          },
        }
      }),
      markTried: assign(({ context }) => ({ tried: [...context.tried, context.winner?.bidId ?? ''] })),
      // Why the winner's job request or contract was refused, kept for the failure message.
      refused: assign(({ context, event }, params: { step: 'lock' | 'contract' }) => {
        const err = toJobError((event as unknown as { error: unknown }).error)
        return {
          refusals: [
            ...(context.refusals ?? []),
            {
              step: params.step,
              provider: context.winner?.provider ?? '',
              bidId: context.winner?.bidId ?? '',
              code: err.code,
              message: err.message,
              at: clock.now(),
            },
          ],
        }
      }),
    },
    guards: {
      // Nothing is locked at the contract-db: the job can go on with its next bid.
      contractRefused: ({ event }) =>
        (event as unknown as { error: unknown }).error instanceof ContractRefusal,
      outcomeFailed: ({ event }) => (event as unknown as { output: Patch }).output.error !== undefined,
      hasCandidate: ({ context }) => context.bids.some((b) => !context.tried.includes(b.bidId)),
      // terminatesOnFailure (steps/terminate.ts) throws a JobFailure once the contract was terminated
      // for provider fault.
      retriesLeft: ({ context, event }) =>
        (event as unknown as { error: unknown }).error instanceof JobFailure &&
        (context.attempts?.length ?? 0) < context.spec.retries,
    },
  }).createMachine({
    id: 'job',
    context: ({ input }) => input,
    initial: 'bidding',
    // Cancel is accepted in every state until the result is in (verifying and settling ignore it).
    on: { CANCEL: { target: '.cancelling' } },
    states: {
      bidding: { entry: stamp('bidding'), ...invokeStep('collectBids', 'selecting') },
      selecting: {
        entry: stamp('selecting'),
        always: [
          { guard: 'hasCandidate', target: 'requesting', actions: 'choose' },
          { target: 'failed', actions: 'noBids' },
        ],
      },
      requesting: {
        entry: stamp('requesting'),
        invoke: {
          src: 'requestLock',
          input: ({ context }) => context,
          onDone: { target: 'contracting', actions: 'merge' },
          onError: {
            target: 'selecting',
            actions: [{ type: 'refused', params: { step: 'lock' as const } }, 'markTried'],
          },
        },
      },
      contracting: {
        entry: stamp('contracting'),
        invoke: {
          src: 'closeContract',
          input: ({ context }) => context,
          onDone: { target: 'invoking', actions: 'merge' },
          onError: [
            {
              guard: 'contractRefused',
              target: 'selecting',
              actions: [{ type: 'refused', params: { step: 'contract' as const } }, 'markTried'],
            },
            { target: 'failed', actions: 'fail' },
          ],
        },
      },
      invoking: { entry: stamp('invoking'), ...retryingStep('invoke', 'running') },
      running: { entry: stamp('running'), ...retryingStep('awaitResult', 'verifying') },
      verifying: { entry: stamp('verifying'), on: { CANCEL: {} }, ...invokeStep('verify', 'settling') },
      settling: {
        entry: stamp('settling'),
        on: { CANCEL: {} },
        invoke: {
          src: 'settle',
          input: ({ context }) => context,
          // Settled either way; the job completes only when the work succeeded and was verified.
          onDone: [
            { guard: 'outcomeFailed', target: 'failed', actions: 'merge' },
            { target: 'completed', actions: 'merge' },
          ],
          onError: { target: 'failed', actions: 'fail' },
        },
      },
      cancelling: {
        entry: stamp('cancelling'),
        on: { CANCEL: {} },
        invoke: {
          src: 'cancel',
          input: ({ context }) => context,
          onDone: { target: 'cancelled', actions: 'merge' },
          onError: { target: 'cancelled', actions: 'fail' },
        },
      },
      completed: { entry: stamp('completed'), type: 'final' },
      failed: { entry: stamp('failed'), type: 'final' },
      cancelled: { entry: stamp('cancelled'), type: 'final' },
    },
  })
}
