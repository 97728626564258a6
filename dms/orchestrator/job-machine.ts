/**
 * The requester's job machine (xstate v5). Spec: specs/state-machines.md.
 * [scheduled ->] bidding -> selecting -> contracting -> invoking -> running -> verifying ->
 * settling -> completed, with failed. The contract's terms lock the reserved bid (the lock folded
 * into the contract); a provider that wants the lock first (an older version) sends the job
 * through requesting (the job request) and back to contracting. A refused lock, or a contract
 * refused before the contract-db locked anything, returns to selecting for the next bid. A job
 * with a `startAt` waits in `scheduled`; a round with no usable bid goes to `queued` (bidding
 * again when capacity news or a backoff wakes it) while the job's queue deadline lasts, else
 * fails.
 * The machine is pure and drives the job: every side effect is a step (an invoked promise actor
 * taking an AbortSignal), one file each in steps/ (built per job by steps/index.ts), so tests can
 * swap them.
 */
import { assign, fromPromise, setup } from 'xstate'
import type { Clock } from '../../actors/clock.js'
import { codeOf } from '../../actors/errors.js'
import { ContractRefusal, JobFailure, LockFirst } from './job-failures.js'
import type { JobError, JobRecord, JobState } from './job-record.js'
import {
  fresh,
  mayQueue,
  noBidsError,
  outcomeKind,
  policyAllows,
  QUEUE_DECLINES_KEPT,
  queueDeadlineOf,
  queueDeclinesOf,
  startsLater,
} from './job-rules.js'
import { rankBids } from './select.js'

export type Patch = Partial<JobRecord>
export type Step = (job: JobRecord, signal: AbortSignal) => Promise<Patch>

export interface JobSteps {
  /** `scheduled`: resolves at the spec's `startAt`. */
  waitUntilStart: Step
  /** `queued`: resolves when the job should bid again; throws QUEUE_TIMEOUT at its deadline. */
  waitForCapacity: Step
  collectBids: Step
  requestLock: Step
  closeContract: Step
  invoke: Step
  awaitResult: Step
  verify: Step
  settle: Step
  /** Stops the run at the provider (if any) and closes the contract for the time used. */
  cancel: Step
  /** Waits until `retryAt` (retry policy backoff, on the clock); absent: no wait. */
  backoff?: Step
}

export { ContractRefusal, JobFailure, LockFirst } from './job-failures.js'

const toJobError = (err: unknown): JobError => {
  const e = err as { message?: unknown; extra?: Partial<JobError> }
  return {
    code: codeOf(err),
    message: String(e.message ?? err),
    ...(e.extra ?? {}),
  }
}

export { QUEUE_DECLINES_KEPT, queueDeadlineOf, queueDeclinesOf, queueTimeoutError } from './job-rules.js'

/** A job machine running `steps`; for tests and diagrams (a running requester uses jobMachineFor). */
export function createJobMachine(steps: JobSteps, clock: Pick<Clock, 'now'>) {
  return buildJobMachine(() => steps, clock)
}

/**
 * The machine over the steps `stepsOf` gives for the xstate actor system of the job running it
 * (one set of steps per job: shared-job-machine.ts builds the machine once for every job).
 */
export function buildJobMachine(stepsOf: (system: object) => JobSteps, clock: Pick<Clock, 'now'>) {
  const step = (name: Exclude<keyof JobSteps, 'backoff'>) =>
    fromPromise<Patch, JobRecord>(({ input, signal, system }) => stepsOf(system)[name](input, signal))
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
          { guard: 'policyRetriesFault', target: 'retrying', actions: ['retry', 'backoffFrom'] },
          { guard: 'retriesLeft', target: 'bidding', actions: 'retry' },
          { target: 'failed', actions: 'fail' },
        ],
      },
    }) as object

  return setup({
    types: { context: {} as JobRecord, input: {} as JobRecord },
    actors: {
      waitUntilStart: step('waitUntilStart'),
      waitForCapacity: step('waitForCapacity'),
      collectBids: step('collectBids'),
      requestLock: step('requestLock'),
      closeContract: step('closeContract'),
      invoke: step('invoke'),
      awaitResult: step('awaitResult'),
      verify: step('verify'),
      settle: step('settle'),
      cancel: step('cancel'),
      backoff: fromPromise<Patch, JobRecord>(({ input, signal, system }) => {
        const steps = stepsOf(system)
        return steps.backoff !== undefined ? steps.backoff(input, signal) : Promise.resolve({})
      }),
    },
    actions: {
      merge: assign(({ event }) => (event as unknown as { output: Patch }).output),
      fail: assign(({ event }) => {
        const err = (event as unknown as { error: unknown }).error
        return { ...((err as { patch?: Patch })?.patch ?? {}), error: toJobError(err) }
      }),
      stampScheduled: assign(({ context }) =>
        startsLater(context, clock.now())
          ? { history: [...context.history, { state: 'scheduled' as const, at: clock.now() }] }
          : {},
      ),
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
          ...fresh,
        }
      }),
      // A run that failed or timed out, retried by the spec's retry policy: record the attempt
      // (its contract was settled for the time used) and bid again, the same provider allowed.
      retryOutcome: assign(({ context, event }) => {
        const patch = (event as unknown as { output: Patch }).output
        return {
          ...fresh,
          attempts: [
            ...(context.attempts ?? []),
            {
              provider: context.winner?.provider as string,
              contractId: context.contract?.terms.contractId,
              error: patch.error as JobError,
              settlement: patch.settlement,
              at: clock.now(),
            },
          ],
        }
      }),
      // When the next attempt starts: backoff seconds, doubled at each attempt (at most 1 h).
      backoffFrom: assign(({ context }) => {
        const base = (context.spec.retryPolicy?.backoffSeconds ?? 0) * 1000
        const n = Math.max(0, (context.attempts?.length ?? 1) - 1)
        return { retryAt: clock.now() + Math.min(base * 2 ** n, 3_600_000) }
      }),
      noBids: assign(({ context }) => ({ error: noBidsError(context) })),
      // No usable bid in this round: keep each provider's latest decline (and refused job request)
      // for the QUEUE_TIMEOUT failure, and start the next round clean.
      enqueue: assign(({ context }) => {
        const latest = new Map(queueDeclinesOf(context).map((d) => [d.provider, d]))
        for (const r of context.refusals ?? [])
          latest.set(r.provider, {
            jobId: context.id,
            provider: r.provider,
            reasons: [`${r.code}: ${r.message}`],
          })
        return {
          queue: {
            deadline: queueDeadlineOf(context),
            rounds: (context.queue?.rounds ?? 0) + 1,
            declines: [...latest.values()].slice(-QUEUE_DECLINES_KEPT),
            ...(context.queue?.wokenBy !== undefined ? { wokenBy: context.queue.wokenBy } : {}),
          },
          bids: [],
          tried: [],
          refusals: [],
          winner: undefined,
        }
      }),
      markTried: assign(({ context }) => ({ tried: [...context.tried, context.winner?.bidId ?? ''] })),
      // Why the winner's job request or contract was refused, kept for the failure message.
      refused: assign(({ context, event }, params: { step: 'lock' | 'contract' }) => {
        const error = (event as unknown as { error: unknown }).error
        const err = toJobError(error)
        return {
          refusals: [
            ...(context.refusals ?? []),
            {
              // The folded lock's refusals are the lock's (ContractRefusal.step).
              step: error instanceof ContractRefusal ? error.step : params.step,
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
      // Waits for its start time first (restored jobs resume where they were).
      startsNow: ({ context }) => !startsLater(context, clock.now()),
      // No usable bid: wait for capacity while the queue deadline lasts (job-rules.ts).
      mayQueue: ({ context }) => mayQueue(context, clock.now()),
      // The provider wants its bid locked first: the job request, then the terms again.
      lockFirst: ({ event }) => (event as unknown as { error: unknown }).error instanceof LockFirst,
      // Nothing is locked at the contract-db: the job can go on with its next bid.
      contractRefused: ({ event }) =>
        (event as unknown as { error: unknown }).error instanceof ContractRefusal,
      outcomeFailed: ({ event }) => (event as unknown as { output: Patch }).output.error !== undefined,
      cancelAsked: ({ context }) => context.cancelRequestedAt !== undefined,
      hasCandidate: ({ context }) => context.bids.some((b) => !context.tried.includes(b.bidId)),
      // terminatesOnFailure (steps/terminate.ts) throws a JobFailure once the contract was terminated
      // for provider fault.
      // The retry policy covers this provider fault (it then waits its backoff before bidding).
      policyRetriesFault: ({ context, event }) =>
        (event as unknown as { error: unknown }).error instanceof JobFailure &&
        policyAllows(context, 'providerFault'),
      // The retry policy covers this run's outcome (failed, timed out).
      policyRetriesOutcome: ({ context, event }) =>
        policyAllows(context, outcomeKind((event as unknown as { output: Patch }).output.error)),
      retriesLeft: ({ context, event }) =>
        (event as unknown as { error: unknown }).error instanceof JobFailure &&
        (context.attempts?.length ?? 0) < context.spec.retries,
    },
  }).createMachine({
    id: 'job',
    context: ({ input }) => input,
    initial: 'scheduled',
    // Cancel is accepted in every state until the settlement starts (settling ignores it): while
    // verifying, it abandons the output fetch and terminates on the receipt (steps/cancel.ts).
    on: { CANCEL: { target: '.cancelling' } },
    states: {
      // Every job enters here; one without a later `startAt` goes on to bidding at once, unstamped.
      scheduled: {
        entry: 'stampScheduled',
        always: { guard: 'startsNow', target: 'bidding' },
        ...invokeStep('waitUntilStart', 'bidding'),
      },
      queued: { entry: stamp('queued'), ...invokeStep('waitForCapacity', 'bidding') },
      bidding: { entry: stamp('bidding'), ...invokeStep('collectBids', 'selecting') },
      selecting: {
        entry: stamp('selecting'),
        always: [
          { guard: 'hasCandidate', target: 'contracting', actions: 'choose' },
          { guard: 'mayQueue', target: 'queued', actions: 'enqueue' },
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
        // A cancel waits for the contract step (the contract-db may have locked the escrow, its
        // answer on the way), then cancels with the proof in hand: no escrow is left locked.
        on: { CANCEL: { actions: assign({ cancelRequestedAt: () => clock.now() }) } },
        invoke: {
          src: 'closeContract',
          input: ({ context }) => context,
          onDone: [
            { guard: 'cancelAsked', target: 'cancelling', actions: 'merge' },
            { target: 'invoking', actions: 'merge' },
          ],
          onError: [
            { guard: 'cancelAsked', target: 'cancelling' },
            { guard: 'lockFirst', target: 'requesting' },
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
      verifying: { entry: stamp('verifying'), ...invokeStep('verify', 'settling') },
      settling: {
        entry: stamp('settling'),
        on: { CANCEL: {} },
        invoke: {
          src: 'settle',
          input: ({ context }) => context,
          // Settled either way; the job completes only when the work succeeded and was verified.
          onDone: [
            {
              guard: 'policyRetriesOutcome',
              target: 'retrying',
              actions: ['merge', 'retryOutcome', 'backoffFrom'],
            },
            { guard: 'outcomeFailed', target: 'failed', actions: 'merge' },
            { target: 'completed', actions: 'merge' },
          ],
          onError: { target: 'failed', actions: 'fail' },
        },
      },
      // A retry policy's backoff: waits until `retryAt` on the clock, then bids again.
      retrying: {
        entry: stamp('retrying'),
        invoke: {
          src: 'backoff',
          input: ({ context }) => context,
          onDone: { target: 'bidding', actions: 'merge' },
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
