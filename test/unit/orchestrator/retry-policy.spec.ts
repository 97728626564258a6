/**
 * A job spec's retry policy in the job machine, with stub steps and the real backoff step on a
 * ManualClock: a failed run is retried after its backoff (doubled each time), the attempts are in
 * the record, a kind not listed or a spent policy fails the job, a cancel during the backoff
 * cancels it, and a listed provider fault waits its backoff too.
 */
import assert from 'node:assert/strict'
import { createActor, waitFor } from 'xstate'
import { ManualClock } from '../../../actors/clock.js'
import type { RetryPolicy } from '../../../dms/orchestrator/job-spec.js'
import {
  createJobMachine,
  JobFailure,
  type JobSteps,
  type Patch,
} from '../../../dms/orchestrator/job-machine.js'
import type { JobError, JobRecord } from '../../../dms/orchestrator/job-record.js'
import { backoffStep } from '../../../dms/orchestrator/steps/backoff.js'
import { jobRecord, settlementFor, signedBid, T0 } from '../../helpers/steps.js'
import { newParty } from '../../helpers/contracts.js'

const runError = (code: string): JobError => ({ code, message: code })

/** Steps that bid, contract and run at once; each settle answers the next of `outcomes`. */
function steps(clock: ManualClock, outcomes: Array<JobError | undefined>, over: Partial<JobSteps> = {}) {
  const provider = newParty()
  let settles = 0
  const s: JobSteps = {
    waitUntilStart: () => Promise.resolve({}),
    waitForCapacity: () => Promise.resolve({}),
    collectBids: (job) => Promise.resolve({ bids: [signedBid(provider, job.id)] }),
    requestLock: () => Promise.resolve({}),
    closeContract: () => Promise.resolve({}),
    invoke: () => Promise.resolve({ allocationId: 'a' }),
    awaitResult: () => Promise.resolve({}),
    verify: () => Promise.resolve({ verification: { outputsHashOk: true, receiptSignatureOk: true } }),
    settle: () => {
      const error = outcomes[settles++]
      return Promise.resolve({ settlement: settlementFor('c'), ...(error ? { error } : {}) } as Patch)
    },
    cancel: () => Promise.resolve({}),
    backoff: backoffStep({ clock }),
    ...over,
  }
  return s
}

function start(clock: ManualClock, s: JobSteps, retryPolicy?: RetryPolicy) {
  const base = jobRecord({ history: [] })
  const input: JobRecord = { ...base, spec: { ...base.spec, ...(retryPolicy ? { retryPolicy } : {}) } }
  const actor = createActor(createJobMachine(s, clock), { input, clock })
  actor.start()
  return actor
}

describe('orchestrator/job-machine: retry policy', () => {
  it('a failed run is retried after its backoff, doubled each time; the attempts are in the record', async () => {
    const clock = new ManualClock(T0)
    const policy: RetryPolicy = { attempts: 3, backoffSeconds: 10, on: ['runFailed'] }
    const actor = start(
      clock,
      steps(clock, [runError('RUN_FAILED'), runError('RUN_FAILED'), undefined]),
      policy,
    )
    await waitFor(actor, (s) => s.value === 'retrying')
    assert.equal(actor.getSnapshot().context.retryAt, T0 + 10_000)
    await clock.advanceAsync(9_999)
    assert.equal(actor.getSnapshot().value, 'retrying', 'still waiting its backoff')
    await clock.advanceAsync(1)
    await waitFor(actor, (s) => s.value === 'retrying' && s.context.attempts?.length === 2)
    assert.equal(actor.getSnapshot().context.retryAt, clock.now() + 20_000, 'doubled')
    await clock.advanceAsync(20_000)
    const done = await waitFor(actor, (s) => s.status === 'done')
    assert.equal(done.value, 'completed')
    const ctx = done.context
    assert.deepEqual(
      ctx.attempts?.map((a) => a.error.code),
      ['RUN_FAILED', 'RUN_FAILED'],
    )
    assert.ok(
      ctx.attempts?.every((a) => a.settlement?.contractId === 'c'),
      'each failed run was settled',
    )
    assert.equal(ctx.excluded, undefined, 'a failed run does not exclude its provider')
    assert.equal(ctx.history.filter((h) => h.state === 'retrying').length, 2)
    assert.equal(ctx.history.filter((h) => h.state === 'bidding').length, 3)
    assert.equal(ctx.error, undefined)
  })

  it('an outcome the policy does not list, or a spent policy, fails the job', async () => {
    const clock = new ManualClock(T0)
    const notListed = start(clock, steps(clock, [runError('RUN_TIMED_OUT')]), {
      attempts: 3,
      backoffSeconds: 0,
      on: ['runFailed'],
    })
    const a = await waitFor(notListed, (s) => s.status === 'done')
    assert.equal(a.value, 'failed')
    assert.equal(a.context.error?.code, 'RUN_TIMED_OUT')
    assert.equal(a.context.attempts, undefined)

    const spent = start(clock, steps(clock, [runError('RUN_TIMED_OUT'), runError('RUN_TIMED_OUT')]), {
      attempts: 1,
      backoffSeconds: 0,
      on: ['timedOut'],
    })
    const b = await waitFor(spent, (s) => s.status === 'done')
    assert.equal(b.value, 'failed')
    assert.equal(b.context.error?.code, 'RUN_TIMED_OUT')
    assert.equal(b.context.attempts?.length, 1)

    const none = start(clock, steps(clock, [runError('RUN_FAILED')]))
    assert.equal((await waitFor(none, (s) => s.status === 'done')).value, 'failed', 'no policy: no retry')
  })

  it('a job cancelled during its backoff is cancelled, never retried', async () => {
    const clock = new ManualClock(T0)
    const bids: string[] = []
    const s = steps(clock, [runError('RUN_FAILED')], {})
    const collect = s.collectBids
    s.collectBids = (job, signal) => {
      bids.push(job.id)
      return collect(job, signal)
    }
    const actor = start(clock, s, { attempts: 5, backoffSeconds: 60, on: ['runFailed'] })
    await waitFor(actor, (x) => x.value === 'retrying')
    actor.send({ type: 'CANCEL' })
    const done = await waitFor(actor, (x) => x.status === 'done')
    assert.equal(done.value, 'cancelled')
    await clock.advanceAsync(3_600_000)
    assert.equal(bids.length, 1, 'no bid request after the cancel')
  })

  it('a listed provider fault waits its backoff, then bids without that provider', async () => {
    const clock = new ManualClock(T0)
    let invokes = 0
    const s = steps(clock, [undefined], {
      invoke: () =>
        ++invokes === 1
          ? Promise.reject(new JobFailure('PROVIDER_SILENT', 'silent'))
          : Promise.resolve({ allocationId: 'a2' }),
    })
    const actor = start(clock, s, { attempts: 2, backoffSeconds: 5, on: ['providerFault'] })
    await waitFor(actor, (x) => x.value === 'retrying')
    const ctx = actor.getSnapshot().context
    assert.equal(ctx.retryAt, T0 + 5_000)
    assert.equal(ctx.excluded?.length, 1)
    await clock.advanceAsync(5_000)
    const done = await waitFor(actor, (x) => x.status === 'done')
    assert.equal(done.value, 'completed')
    assert.equal(done.context.attempts?.[0].error.code, 'PROVIDER_SILENT')
  })
})
