/**
 * The job machine's `scheduled` and `queued` states with stub steps on a fake clock: a job with a
 * later startAt is stamped `scheduled` and bids after its wait; a round with no usable bid goes
 * to `queued` while queueTimeout allows and bids again when woken, keeping every provider's
 * decline; the deadline fails it QUEUE_TIMEOUT; CANCEL works while queued; queueTimeout 0 fails
 * at once as before; a restored queued job waits again.
 */
import assert from 'node:assert/strict'
import { createActor, waitFor } from 'xstate'
import type { Bid } from '../../../dms/contracts/model.js'
import {
  ContractRefusal,
  createJobMachine,
  JobFailure,
  type JobSteps,
  type Patch,
} from '../../../dms/orchestrator/job-machine.js'
import type { JobRecord } from '../../../dms/orchestrator/job-record.js'
import type { Decline } from '../../../dms/protocol/messages.js'

const T0 = 1_000_000

const bid = (bidId: string): Bid => ({
  bidId,
  jobId: 'job-1',
  provider: `12D3KooWProvider-${bidId}`,
  resources: { cpu: 1, memoryBytes: 1, diskBytes: 0, gpus: 0 },
  image: 'dms-test:1',
  maxDurationSeconds: 60,
  pricePerHour: 100,
  minJobPrice: 0,
  total: 100,
  earliestStart: T0,
  expectedFinish: T0 + 60_000,
  expiresAt: T0 + 120_000,
  resourcesReserved: true,
  signature: 'sig',
})
const busy = (provider: string, reason = 'not enough cpu'): Decline => ({
  jobId: 'job-1',
  provider,
  reasons: [reason],
})

const record = (spec: Partial<JobRecord['spec']> = {}): JobRecord => ({
  id: 'job-1',
  spec: {
    image: 'dms-test:1',
    command: ['true'],
    env: {},
    resources: { cpu: 1, memoryBytes: 64 * 1024 * 1024, diskBytes: 0, gpus: 0 },
    maxDurationSeconds: 60,
    maxPrice: 1000,
    retries: 0,
    providers: { allow: [], deny: [] },
    ...spec,
  },
  createdAt: T0,
  history: [],
  bids: [],
  declines: [],
  tried: [],
  updates: [],
})

function harness(rounds: Array<Patch>, over: Partial<JobSteps> = {}) {
  const clock = { t: T0, now: () => clock.t }
  const calls: string[] = []
  const ok =
    (name: string, patch: Patch = {}) =>
    () => {
      calls.push(name)
      return Promise.resolve(patch)
    }
  let round = 0
  const steps: JobSteps = {
    waitUntilStart: (job) => {
      calls.push('waitUntilStart')
      clock.t = job.spec.startAt ?? clock.t
      return Promise.resolve({})
    },
    waitForCapacity: (job) => {
      calls.push('waitForCapacity')
      clock.t += 1000
      return Promise.resolve({ queue: { ...job.queue!, wokenBy: 'capacity 12D3KooWX' } })
    },
    collectBids: () => {
      calls.push('collectBids')
      return Promise.resolve(rounds[Math.min(round++, rounds.length - 1)])
    },
    requestLock: ok('requestLock'),
    closeContract: ok('closeContract'),
    invoke: ok('invoke', { allocationId: 'a-1' }),
    awaitResult: ok('awaitResult'),
    verify: ok('verify', { verification: { outputsHashOk: true, receiptSignatureOk: true } }),
    settle: ok('settle'),
    cancel: ok('cancel', { cancelRequestedAt: T0 }),
    ...over,
  }
  return { clock, calls, machine: createJobMachine(steps, clock) }
}

const states = (ctx: JobRecord) => ctx.history.map((h) => h.state)

describe('orchestrator/job-machine: scheduled and queued', () => {
  it('a later startAt waits in scheduled, then bids; an earlier one is not stamped', async () => {
    const h = harness([{ bids: [bid('b1')] }])
    const actor = createActor(h.machine, { input: record({ startAt: T0 + 60_000 }) }).start()
    const snap = await waitFor(actor, (s) => s.status === 'done')
    assert.equal(snap.value, 'completed')
    assert.deepEqual(states(snap.context).slice(0, 2), ['scheduled', 'bidding'])
    assert.deepEqual(h.calls.slice(0, 2), ['waitUntilStart', 'collectBids'])
    assert.equal(snap.context.history[1].at, T0 + 60_000, 'bid at its start time, not before')

    const past = harness([{ bids: [bid('b1')] }])
    const done = await waitFor(
      createActor(past.machine, { input: record({ startAt: T0 - 1 }) }).start(),
      (s) => s.status === 'done',
    )
    assert.equal(states(done.context)[0], 'bidding')
    assert.ok(!past.calls.includes('waitUntilStart'))
  })

  it('no usable bid with queueTimeout: queued, woken, bids again and completes; declines kept', async () => {
    const h = harness([
      { bids: [], declines: [busy('12D3KooWAAAA'), busy('12D3KooWBBBB')] },
      { bids: [], declines: [busy('12D3KooWAAAA', 'cpu still busy')] },
      { bids: [bid('b1')], declines: [] },
    ])
    const actor = createActor(h.machine, { input: record({ queueTimeoutSeconds: 60 }) }).start()
    const snap = await waitFor(actor, (s) => s.status === 'done')
    assert.equal(snap.value, 'completed')
    assert.deepEqual(states(snap.context).slice(0, 7), [
      'bidding',
      'selecting',
      'queued',
      'bidding',
      'selecting',
      'queued',
      'bidding',
    ])
    const q = snap.context.queue!
    assert.equal(q.deadline, T0 + 60_000, 'posted at T0 + 60 s')
    assert.equal(q.rounds, 2)
    assert.equal(q.wokenBy, 'capacity 12D3KooWX')
    assert.deepEqual(
      q.declines.map((d) => [d.provider, d.reasons[0]]),
      [
        ['12D3KooWAAAA', 'cpu still busy'],
        ['12D3KooWBBBB', 'not enough cpu'],
      ],
    )
  })

  it('every bidder refusing the lock also queues (capacity taken meanwhile)', async () => {
    // The folded lock refused: the provider would not take the reserved bid for the terms.
    const h = harness([{ bids: [bid('b1')] }, { bids: [bid('b2')] }], {
      closeContract: (job) =>
        job.winner?.bidId === 'b1'
          ? Promise.reject(
              new ContractRefusal('LOCK_FAILED', 'lock lost', { provider: 'p', bidId: 'b1' }, 'lock'),
            )
          : Promise.resolve({}),
    })
    const snap = await waitFor(
      createActor(h.machine, { input: record({ queueTimeoutSeconds: 60 }) }).start(),
      (s) => s.status === 'done',
    )
    assert.equal(snap.value, 'completed')
    assert.ok(states(snap.context).includes('queued'))
    assert.match(snap.context.queue!.declines[0].reasons[0], /lock lost/)
    assert.deepEqual(snap.context.tried, [], 'a new round starts clean')
  })

  it('a contract refused only for coming too late queues and bids again; any other refusal fails', async () => {
    // The contract-db was restarting: the contract reached it after its startBy. Nothing is locked.
    const late = harness([{ bids: [bid('b1')] }, { bids: [bid('b2')] }], {
      closeContract: (job) =>
        job.winner?.bidId === 'b1'
          ? Promise.reject(
              new ContractRefusal('START_DEADLINE_PASSED', 'startBy has passed', {
                provider: 'p',
                bidId: 'b1',
              }),
            )
          : Promise.resolve({}),
    })
    const done = await waitFor(
      createActor(late.machine, { input: record({ queueTimeoutSeconds: 60 }) }).start(),
      (s) => s.status === 'done',
    )
    assert.equal(done.value, 'completed')
    assert.ok(states(done.context).includes('queued'))
    assert.match(done.context.queue!.declines[0].reasons[0], /START_DEADLINE_PASSED/)

    // A refusal about the contract itself is not a matter of time: it fails, queueTimeout or not.
    const refused = harness([{ bids: [bid('b1')] }, { bids: [bid('b2')] }], {
      closeContract: () =>
        Promise.reject(
          new ContractRefusal('PARTY_ROLE_NOT_APPROVED', 'not a requester', { provider: 'p', bidId: 'b1' }),
        ),
    })
    const failed = await waitFor(
      createActor(refused.machine, { input: record({ queueTimeoutSeconds: 60 }) }).start(),
      (s) => s.status === 'done',
    )
    assert.equal(failed.value, 'failed')
    assert.equal(failed.context.error?.code, 'CONTRACT_REFUSED')
    assert.ok(!states(failed.context).includes('queued'))
  })

  it('QUEUE_TIMEOUT from the wait fails the job with the collected declines', async () => {
    const h = harness([{ bids: [], declines: [busy('12D3KooWAAAA')] }], {
      waitForCapacity: () =>
        Promise.reject(
          new JobFailure('QUEUE_TIMEOUT', 'no provider had room', { declines: [busy('12D3KooWAAAA')] }),
        ),
    })
    const snap = await waitFor(
      createActor(h.machine, { input: record({ queueTimeoutSeconds: 5 }) }).start(),
      (s) => s.status === 'done',
    )
    assert.equal(snap.value, 'failed')
    assert.equal(snap.context.error?.code, 'QUEUE_TIMEOUT')
    assert.equal(snap.context.error?.declines?.[0].provider, '12D3KooWAAAA')
  })

  it('a round ending after the deadline fails QUEUE_TIMEOUT, not NO_BIDS', async () => {
    const h = harness([{ bids: [], declines: [busy('12D3KooWAAAA')] }], {
      waitForCapacity: (job) => {
        h.clock.t = job.queue!.deadline + 1 // the last round ran past the deadline
        return Promise.resolve({})
      },
    })
    const snap = await waitFor(
      createActor(h.machine, { input: record({ queueTimeoutSeconds: 5 }) }).start(),
      (s) => s.status === 'done',
    )
    assert.equal(snap.context.error?.code, 'QUEUE_TIMEOUT')
    assert.match(snap.context.error?.message ?? '', /1 bid rounds\): KooWAAAA: not enough cpu/)
  })

  it('queueTimeout 0 (or none) fails NO_BIDS at once, as before', async () => {
    for (const queueTimeoutSeconds of [0, undefined]) {
      const h = harness([{ bids: [], declines: [busy('12D3KooWAAAA')] }])
      const snap = await waitFor(
        createActor(h.machine, { input: record({ queueTimeoutSeconds }) }).start(),
        (s) => s.status === 'done',
      )
      assert.equal(snap.context.error?.code, 'NO_BIDS')
      assert.deepEqual(states(snap.context), ['bidding', 'selecting', 'failed'])
    }
  })

  it('CANCEL while queued ends cancelled; a restored queued job waits again', async () => {
    let waits = 0
    const h = harness([{ bids: [], declines: [busy('12D3KooWAAAA')] }], {
      waitForCapacity: (_job, signal) => {
        waits++
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(new Error('aborted'))),
        )
      },
    })
    const actor = createActor(h.machine, { input: record({ queueTimeoutSeconds: 60 }) }).start()
    await waitFor(actor, (s) => s.value === 'queued')
    const persisted = actor.getPersistedSnapshot()
    actor.stop()
    const restored = createActor(h.machine, {
      input: record(),
      snapshot: persisted,
    }).start()
    assert.equal(restored.getSnapshot().value, 'queued')
    await new Promise((r) => setImmediate(r))
    assert.equal(waits, 2, 'the restored machine waits again (its deadline is in the record)')
    restored.send({ type: 'CANCEL' })
    const snap = await waitFor(restored, (s) => s.status === 'done')
    assert.equal(snap.value, 'cancelled')
    assert.deepEqual(states(snap.context).slice(-3), ['queued', 'cancelling', 'cancelled'])
  })
})
