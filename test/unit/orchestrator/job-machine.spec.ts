/**
 * The requester's job machine with stub steps (steps are injected: the machine is pure) and a fake
 * clock that the steps advance.
 */
import assert from 'node:assert/strict'
import { createActor, waitFor, type Snapshot } from 'xstate'
import type { Clock } from '../../../actors/clock.js'
import type { Settlement, Bid } from '../../../dms/contracts/model.js'
import type { Decline } from '../../../dms/protocol/messages.js'
import {
  ContractRefusal,
  createJobMachine,
  JobFailure,
  LockFirst,
  type JobSteps,
  type Patch,
  type Step,
} from '../../../dms/orchestrator/job-machine.js'
import type { JobRecord, JobState } from '../../../dms/orchestrator/job-record.js'

const T0 = 1_000_000
const STEP_MS = 100

class FakeClock implements Pick<Clock, 'now'> {
  t = T0
  now(): number {
    return this.t
  }
}

const bid = (bidId: string, total: number, provider = `12D3KooWProvider-${bidId}`): Bid => ({
  bidId,
  jobId: 'job-1',
  provider,
  resources: { cpu: 1, memoryBytes: 1, diskBytes: 0, gpus: 0 },
  image: 'dms-test:1',
  maxDurationSeconds: 60,
  pricePerHour: total,
  minJobPrice: 0,
  total,
  earliestStart: T0,
  expectedFinish: T0 + 60_000,
  expiresAt: T0 + 120_000,
  resourcesReserved: true,
  signature: 'sig',
})

const settlement: Settlement = {
  contractId: 'c-1',
  outcome: 'settled',
  paidToProvider: 10,
  refundedToRequester: 90,
  billedSeconds: 5,
  settledAt: T0,
  contractDb: '12D3KooWContractDb',
  signature: 'sig',
}

const record = (retries = 0): JobRecord => ({
  id: 'job-1',
  spec: {
    image: 'dms-test:1',
    command: ['true'],
    env: {},
    resources: { cpu: 1, memoryBytes: 64 * 1024 * 1024, diskBytes: 0, gpus: 0 },
    maxDurationSeconds: 60,
    maxPrice: 1000,
    retries,
    providers: { allow: [], deny: [] },
  },
  createdAt: T0,
  history: [],
  bids: [],
  declines: [],
  tried: [],
  updates: [],
})

/** Stub steps that each advance the clock by STEP_MS and record their call; override any. */
function stubSteps(clock: FakeClock, over: Partial<JobSteps> = {}) {
  const calls: Array<{ step: keyof JobSteps; job: JobRecord }> = []
  const make =
    (name: keyof JobSteps, patch: (job: JobRecord) => Patch): Step =>
    async (job, signal) => {
      calls.push({ step: name, job })
      await Promise.resolve()
      clock.t += STEP_MS
      const fn = over[name]
      return fn ? fn(job, signal) : patch(job)
    }
  const steps: JobSteps = {
    waitUntilStart: make('waitUntilStart', () => ({})),
    waitForCapacity: make('waitForCapacity', () => ({})),
    collectBids: make('collectBids', () => ({ bids: [bid('b1', 100), bid('b2', 200)] })),
    requestLock: make('requestLock', () => ({})),
    closeContract: make('closeContract', () => ({})),
    invoke: make('invoke', () => ({ allocationId: 'alloc-1' })),
    awaitResult: make('awaitResult', () => ({})),
    verify: make('verify', () => ({ verification: { outputsHashOk: true, receiptSignatureOk: true } })),
    settle: make('settle', () => ({ settlement })),
    cancel: make('cancel', () => ({ settlement })),
  }
  return { steps, calls }
}

async function run(over: Partial<JobSteps> = {}, retries = 0) {
  const clock = new FakeClock()
  const { steps, calls } = stubSteps(clock, over)
  const actor = createActor(createJobMachine(steps, clock), { input: record(retries) })
  actor.start()
  const snap = await waitFor(actor, (s) => s.status === 'done', { timeout: 2000 })
  return { snap, calls, ctx: snap.context, states: snap.context.history.map((h) => h.state) }
}

describe('orchestrator/job-machine', () => {
  it('happy path: visits every state in order, stamped with the clock, and completes', async () => {
    const { snap, ctx, calls } = await run()
    assert.equal(snap.value, 'completed')
    assert.deepEqual(ctx.history, [
      { state: 'bidding', at: T0 },
      { state: 'selecting', at: T0 + 100 },
      // The contract's terms lock the reserved bid: no `requesting` (the lock folded into it).
      { state: 'contracting', at: T0 + 100 },
      { state: 'invoking', at: T0 + 200 },
      { state: 'running', at: T0 + 300 },
      { state: 'verifying', at: T0 + 400 },
      { state: 'settling', at: T0 + 500 },
      { state: 'completed', at: T0 + 600 },
    ] satisfies Array<{ state: JobState; at: number }>)
    assert.deepEqual(
      calls.map((c) => c.step),
      ['collectBids', 'closeContract', 'invoke', 'awaitResult', 'verify', 'settle'],
    )
    assert.equal(ctx.error, undefined)
    assert.equal(ctx.allocationId, 'alloc-1')
    assert.deepEqual(ctx.settlement, settlement)
  })

  it('picks the cheapest bid and passes each step the context so far', async () => {
    const { ctx, calls } = await run({
      collectBids: () => Promise.resolve({ bids: [bid('pricey', 500), bid('cheap', 150), bid('mid', 300)] }),
    })
    assert.equal(ctx.winner?.bidId, 'cheap')
    assert.equal(ctx.winner?.provider, '12D3KooWProvider-cheap')
    assert.match(ctx.winner?.why ?? '', /lowest score of 3 bids: total 150/)
    const contract = calls.find((c) => c.step === 'closeContract')!
    assert.equal(contract.job.winner?.bidId, 'cheap', 'closeContract sees the chosen winner')
    const settle = calls.find((c) => c.step === 'settle')!
    assert.equal(settle.job.allocationId, 'alloc-1', 'later steps see earlier patches')
    assert.equal(settle.job.verification?.outputsHashOk, true)
  })

  it('no bids and no declines: failed with NO_BIDS', async () => {
    const { snap, ctx, calls, states } = await run({
      collectBids: () => Promise.resolve({ bids: [], providersConnected: 2 }),
    })
    assert.equal(snap.value, 'failed')
    assert.equal(ctx.error?.code, 'NO_BIDS')
    assert.equal(ctx.error?.message, 'no provider answered the bid request (2 providers connected)')
    assert.deepEqual(states, ['bidding', 'selecting', 'failed'])
    assert.deepEqual(
      calls.map((c) => c.step),
      ['collectBids'],
    )
  })

  it('no bids but declines: failed with NO_BIDS and the decline reasons in the message', async () => {
    const declines: Decline[] = [
      {
        jobId: 'job-1',
        provider: '12D3KooWAAAAAAAAprovAAAA',
        reasons: ['not enough cpu: need 4 cores, free 2 cores'],
      },
      {
        jobId: 'job-1',
        provider: '12D3KooWBBBBBBBBprovBBBB',
        reasons: ['image x is not allowed here', 'price 9 exceeds'],
      },
    ]
    const { snap, ctx } = await run({ collectBids: () => Promise.resolve({ bids: [], declines }) })
    assert.equal(snap.value, 'failed')
    assert.equal(ctx.error?.code, 'NO_BIDS')
    const msg = ctx.error?.message ?? ''
    assert.match(msg, /not enough cpu: need 4 cores, free 2 cores/)
    assert.match(msg, /image x is not allowed here/)
    assert.match(msg, /price 9 exceeds/)
    assert.match(msg, /provAAAA/, 'names the provider (shortened)')
    assert.deepEqual(ctx.error?.declines, declines)
  })

  it('a provider that wants the lock first (LockFirst): the job request, then the terms again', async () => {
    const contracted: string[] = []
    const { snap, ctx, states, calls } = await run({
      closeContract: (job) => {
        contracted.push(job.winner!.bidId)
        // Refused once for the reserved bid, signed once the job request locked it.
        return contracted.length === 1
          ? Promise.reject(new LockFirst('provider asks for the lock first: bid is offered'))
          : Promise.resolve({})
      },
    })
    assert.equal(snap.value, 'completed')
    assert.deepEqual(contracted, ['b1', 'b1'], 'the same bid, not the next one')
    assert.deepEqual(ctx.tried, [])
    assert.equal(ctx.refusals, undefined, 'no refusal kept')
    assert.deepEqual(states.slice(0, 6), [
      'bidding',
      'selecting',
      'contracting',
      'requesting',
      'contracting',
      'invoking',
    ])
    assert.equal(calls.filter((c) => c.step === 'requestLock').length, 1)
  })

  it('a declined job request (after LockFirst) moves on to the next-ranked bid', async () => {
    const asked: string[] = []
    const { snap, ctx, states } = await run({
      collectBids: () => Promise.resolve({ bids: [bid('b2', 200), bid('b1', 100), bid('b3', 300)] }),
      closeContract: (job) =>
        job.history.at(-2)?.state === 'requesting'
          ? Promise.resolve({})
          : Promise.reject(new LockFirst('provider asks for the lock first: bid is offered')),
      requestLock: (job) => {
        asked.push(job.winner!.bidId)
        return job.winner?.bidId === 'b1' ? Promise.reject(new Error('declined: busy')) : Promise.resolve({})
      },
    })
    assert.equal(snap.value, 'completed')
    assert.deepEqual(asked, ['b1', 'b2'])
    assert.deepEqual(ctx.tried, ['b1'])
    assert.equal(ctx.winner?.bidId, 'b2')
    assert.equal(ctx.winner?.provider, '12D3KooWProvider-b2')
    assert.deepEqual(
      ctx.refusals?.map((r) => [r.step, r.bidId]),
      [['lock', 'b1']],
    )
    assert.deepEqual(states.slice(0, 9), [
      'bidding',
      'selecting',
      'contracting',
      'requesting',
      'selecting',
      'contracting',
      'requesting',
      'contracting',
      'invoking',
    ])
    assert.equal(ctx.error, undefined)
  })

  it('a reserved bid the provider would not lock (the folded lock refused) moves on to the next-ranked bid', async () => {
    const { snap, ctx, states } = await run({
      collectBids: () => Promise.resolve({ bids: [bid('b2', 200), bid('b1', 100)] }),
      closeContract: (job) =>
        job.winner?.bidId === 'b1'
          ? Promise.reject(
              new ContractRefusal(
                'LOCK_FAILED',
                'cannot lock resources',
                { provider: 'p', bidId: 'b1' },
                'lock',
              ),
            )
          : Promise.resolve({}),
    })
    assert.equal(snap.value, 'completed')
    assert.equal(ctx.winner?.bidId, 'b2')
    assert.deepEqual(
      ctx.refusals?.map((r) => [r.step, r.code]),
      [['lock', 'LOCK_FAILED']],
      'kept as the lock refused (a matter of capacity: the job may queue)',
    )
    assert.deepEqual(states.slice(0, 5), ['bidding', 'selecting', 'contracting', 'selecting', 'contracting'])
  })

  it('every bidder refusing the lock: failed with NO_PROVIDER_ACCEPTED', async () => {
    const asked: string[] = []
    const { snap, ctx, calls } = await run({
      closeContract: (job) => {
        asked.push(job.winner!.bidId)
        return Promise.reject(
          new ContractRefusal(
            'BID_NOT_OPEN',
            'bid is expired',
            { provider: 'p', bidId: job.winner!.bidId },
            'lock',
          ),
        )
      },
    })
    assert.equal(snap.value, 'failed')
    assert.equal(ctx.error?.code, 'NO_PROVIDER_ACCEPTED')
    assert.deepEqual(asked, ['b1', 'b2'])
    assert.deepEqual(ctx.tried, ['b1', 'b2'])
    assert.ok(!calls.some((c) => c.step === 'invoke'), 'no run without a contract')
  })

  it('a contract refused before anything was locked moves on to the next bid; the refusal is kept', async () => {
    const contracted: string[] = []
    const { snap, ctx, states } = await run({
      closeContract: (job) => {
        contracted.push(job.winner!.bidId)
        return job.winner?.bidId === 'b1'
          ? Promise.reject(
              new ContractRefusal('PARTY_NOT_APPROVED', 'contract-db refused the contract: not approved', {
                provider: job.winner.provider,
                bidId: 'b1',
              }),
            )
          : Promise.resolve({})
      },
    })
    assert.equal(snap.value, 'completed')
    assert.deepEqual(contracted, ['b1', 'b2'])
    assert.deepEqual(ctx.tried, ['b1'])
    assert.equal(ctx.winner?.bidId, 'b2')
    assert.deepEqual(ctx.refusals, [
      {
        step: 'contract',
        provider: '12D3KooWProvider-b1',
        bidId: 'b1',
        code: 'PARTY_NOT_APPROVED',
        message: 'contract-db refused the contract: not approved',
        at: T0 + 200,
      },
    ])
    assert.deepEqual(states.slice(0, 5), ['bidding', 'selecting', 'contracting', 'selecting', 'contracting'])
  })

  it('every contract refused: failed with CONTRACT_REFUSED, naming each refusal', async () => {
    const { snap, ctx } = await run({
      closeContract: (job) =>
        Promise.reject(
          new ContractRefusal('INSUFFICIENT_FUNDS', 'short of escrow', {
            provider: job.winner!.provider,
            bidId: job.winner!.bidId,
          }),
        ),
    })
    assert.equal(snap.value, 'failed')
    assert.equal(ctx.error?.code, 'CONTRACT_REFUSED')
    assert.match(
      ctx.error.message,
      /^no bid could be contracted: .*INSUFFICIENT_FUNDS: short of escrow \| .*INSUFFICIENT_FUNDS/,
    )
    assert.deepEqual(ctx.tried, ['b1', 'b2'])
  })

  it('a step throwing JobFailure fails the job with its code and message', async () => {
    const { snap, ctx, calls, states } = await run({
      closeContract: () =>
        Promise.reject(new JobFailure('CONTRACT_REFUSED', 'contract-db refused: PARTY_NOT_APPROVED')),
    })
    assert.equal(snap.value, 'failed')
    assert.deepEqual(ctx.error, {
      code: 'CONTRACT_REFUSED',
      message: 'contract-db refused: PARTY_NOT_APPROVED',
    })
    assert.deepEqual(states, ['bidding', 'selecting', 'contracting', 'failed'])
    assert.ok(!calls.some((c) => c.step === 'invoke'), 'nothing runs after the failure')
  })

  it('JobFailure extra fields are kept; a plain error fails as INTERNAL', async () => {
    const declines: Decline[] = [{ jobId: 'job-1', provider: 'p', reasons: ['r'] }]
    const a = await run({
      awaitResult: () => Promise.reject(new JobFailure('PROVIDER_SILENT', 'no result', { declines })),
    })
    assert.equal(a.snap.value, 'failed')
    assert.deepEqual(a.ctx.error, { code: 'PROVIDER_SILENT', message: 'no result', declines })
    const b = await run({ invoke: () => Promise.reject(new Error('socket hang up')) })
    assert.equal(b.snap.value, 'failed')
    assert.deepEqual(b.ctx.error, { code: 'INTERNAL', message: 'socket hang up' })
  })

  it('settle returning an error patch fails the job but keeps the settlement', async () => {
    const error = { code: 'VERIFICATION_FAILED', message: 'outputs did not verify; escrow refunded' }
    const { snap, ctx, states } = await run({ settle: () => Promise.resolve({ settlement, error }) })
    assert.equal(snap.value, 'failed')
    assert.deepEqual(ctx.error, error)
    assert.deepEqual(ctx.settlement, settlement)
    assert.deepEqual(states.slice(-2), ['settling', 'failed'])
  })

  it('settle throwing fails the job with its code', async () => {
    const { snap, ctx } = await run({
      settle: () => Promise.reject(new JobFailure('SETTLEMENT_FAILED', 'no answer')),
    })
    assert.equal(snap.value, 'failed')
    assert.equal(ctx.error?.code, 'SETTLEMENT_FAILED')
    assert.equal(ctx.settlement, undefined)
  })

  it('stopping the machine aborts the running step through its signal', async () => {
    const clock = new FakeClock()
    let signal: AbortSignal | undefined
    let started!: () => void
    const running = new Promise<void>((r) => (started = r))
    const { steps } = stubSteps(clock, {
      awaitResult: (_job, s) => {
        signal = s
        started()
        return new Promise<Patch>(() => {})
      },
    })
    const actor = createActor(createJobMachine(steps, clock), { input: record() })
    actor.start()
    await running
    assert.equal(actor.getSnapshot().value, 'running')
    assert.equal(signal?.aborted, false)
    actor.stop()
    assert.equal(signal?.aborted, true)
  })

  it('a provider fault re-bids without that provider, up to the retry limit', async () => {
    let bids = 0
    const fault = () => {
      const f = new JobFailure('PROVIDER_SILENT', 'provider silent for 6000 ms')
      f.patch = { settlement }
      return Promise.reject(f)
    }
    const { snap, ctx, states } = await run(
      {
        collectBids: () => Promise.resolve({ bids: [bid(`b${++bids}`, 100)] }),
        awaitResult: fault,
      },
      2,
    )
    assert.equal(snap.value, 'failed')
    assert.equal(ctx.error?.code, 'PROVIDER_SILENT')
    assert.deepEqual(
      ctx.attempts?.map((a) => [a.provider, a.error.code, a.settlement?.contractId]),
      [
        ['12D3KooWProvider-b1', 'PROVIDER_SILENT', settlement.contractId],
        ['12D3KooWProvider-b2', 'PROVIDER_SILENT', settlement.contractId],
      ],
    )
    assert.deepEqual(ctx.excluded, ['12D3KooWProvider-b1', '12D3KooWProvider-b2'])
    assert.equal(states.filter((s) => s === 'bidding').length, 3, 'first round + 2 retries')
  })

  it('a re-bid after a fault can complete on another provider', async () => {
    let n = 0
    const { snap, ctx } = await run(
      {
        collectBids: () => Promise.resolve({ bids: [bid(`b${++n}`, 100)] }),
        awaitResult: (job) =>
          job.winner?.bidId === 'b1'
            ? Promise.reject(new JobFailure('PROVIDER_SILENT', 'silent'))
            : Promise.resolve({}),
      },
      3,
    )
    assert.equal(snap.value, 'completed')
    assert.equal(ctx.winner?.bidId, 'b2')
    assert.equal(ctx.attempts?.length, 1)
  })

  it('CANCEL while running aborts the step, runs cancel, and ends cancelled; ignored once ended', async () => {
    const clock = new FakeClock()
    let signal: AbortSignal | undefined
    let started!: () => void
    const running = new Promise<void>((r) => (started = r))
    const { steps, calls } = stubSteps(clock, {
      awaitResult: (_job, s) => {
        signal = s
        started()
        return new Promise<Patch>(() => {})
      },
    })
    const actor = createActor(createJobMachine(steps, clock), { input: record() })
    actor.start()
    await running
    actor.send({ type: 'CANCEL' })
    assert.equal(signal?.aborted, true)
    const snap = await waitFor(actor, (s) => s.status === 'done', { timeout: 2000 })
    assert.equal(snap.value, 'cancelled')
    assert.deepEqual(
      snap.context.history.slice(-3).map((h) => h.state),
      ['running', 'cancelling', 'cancelled'],
    )
    assert.equal(calls.filter((c) => c.step === 'cancel').length, 1)
    assert.deepEqual(snap.context.settlement, settlement)
  })

  it('CANCEL while contracting waits for the contract (escrow may be locked), then cancels it with its proof', async () => {
    const clock = new FakeClock()
    let reply!: (p: Patch) => void
    let signal: AbortSignal | undefined
    let started!: () => void
    const contracting = new Promise<void>((r) => (started = r))
    const { steps, calls } = stubSteps(clock, {
      // The contract-db locked the escrow; its proof is on the way.
      closeContract: (_job, s) => {
        signal = s
        started()
        return new Promise<Patch>((r) => (reply = r))
      },
    })
    const actor = createActor(createJobMachine(steps, clock), { input: record() })
    actor.start()
    await contracting
    actor.send({ type: 'CANCEL' })
    assert.equal(signal?.aborted, false, 'the contract step is not abandoned')
    assert.equal(actor.getSnapshot().value, 'contracting')
    reply({ proof: { contractId: 'c-1' } as never })
    const snap = await waitFor(actor, (s) => s.status === 'done', { timeout: 2000 })
    assert.equal(snap.value, 'cancelled')
    assert.deepEqual(
      snap.context.history.slice(-3).map((h) => h.state),
      ['contracting', 'cancelling', 'cancelled'],
    )
    const cancel = calls.find((c) => c.step === 'cancel')
    assert.equal(cancel?.job.proof?.contractId, 'c-1', 'the cancel step has the proof: it terminates')
    assert.equal(calls.filter((c) => c.step === 'invoke').length, 0, 'never invoked')
  })

  it('CANCEL while verifying abandons the output check and ends cancelled with the cancel settlement', async () => {
    const clock = new FakeClock()
    let signal: AbortSignal | undefined
    let started!: () => void
    const verifying = new Promise<void>((r) => (started = r))
    const { steps, calls } = stubSteps(clock, {
      verify: (_job, s) => {
        signal = s
        started()
        return new Promise<Patch>(() => {}) // an archive that never finishes arriving
      },
    })
    const actor = createActor(createJobMachine(steps, clock), { input: record() })
    actor.start()
    await verifying
    actor.send({ type: 'CANCEL' })
    assert.equal(signal?.aborted, true)
    const snap = await waitFor(actor, (s) => s.status === 'done', { timeout: 2000 })
    assert.equal(snap.value, 'cancelled')
    assert.deepEqual(
      snap.context.history.slice(-3).map((h) => h.state),
      ['verifying', 'cancelling', 'cancelled'],
    )
    assert.equal(calls.filter((c) => c.step === 'settle').length, 0)
    assert.deepEqual(snap.context.settlement, settlement)
  })

  it('a persisted snapshot restores into the same state and runs its step again', async () => {
    const clock = new FakeClock()
    let started!: () => void
    const running = new Promise<void>((r) => (started = r))
    const first = stubSteps(clock, {
      awaitResult: () => {
        started()
        return new Promise<Patch>(() => {})
      },
    })
    const a = createActor(createJobMachine(first.steps, clock), { input: record() })
    a.start()
    await running
    const persisted = JSON.parse(JSON.stringify(a.getPersistedSnapshot())) as Snapshot<unknown>
    a.stop()
    const second = stubSteps(clock)
    const b = createActor(createJobMachine(second.steps, clock), { input: record(), snapshot: persisted })
    b.start()
    const snap = await waitFor(b, (s) => s.status === 'done', { timeout: 2000 })
    assert.equal(snap.value, 'completed')
    assert.deepEqual(
      second.calls.map((c) => c.step),
      ['awaitResult', 'verify', 'settle'],
    )
    assert.equal(second.calls[0].job.allocationId, 'alloc-1', 'the restored context')
  })
})
