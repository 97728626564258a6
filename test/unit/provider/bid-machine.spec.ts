/**
 * The provider's bid machine with fake actors (a ledger that records its calls, runs the test
 * finishes) on a ManualClock: the machine drives each bid from its reservation to its release,
 * its deadlines come from the context, and a restored machine goes back where it was.
 */
import { container } from '../../helpers/workload.js'
import assert from 'node:assert/strict'
import { createActor, waitFor, type Actor } from 'xstate'
import { ManualClock } from '../../../actors/clock.js'
import type { BidContext, BidState } from '../../../dms/provider/bid-context.js'
import type { BidMachine } from '../../../dms/provider/bid-machine.js'
import { flatState } from '../../../dms/provider/bid-store.js'
import { bidContext, completedRun, contractFor, Fakes } from '../../helpers/provider-fakes.js'

describe('provider/bid-machine', () => {
  let clock: ManualClock
  let fakes: Fakes
  let actor: Actor<BidMachine>

  const start = (context: BidContext) => {
    actor = createActor(fakes.machine(clock), { input: { context }, clock })
    actor.start()
    return actor
  }
  const state = () => flatState(actor.getSnapshot().value)
  const reaches = (s: BidState) => waitFor(actor, (snap) => flatState(snap.value) === s)
  const states = () => actor.getSnapshot().context.history.map((h) => h.state)
  const invoke = () =>
    actor.send({
      type: 'INVOKE',
      allocation: {
        allocationId: 'alloc-1',
        contract: contractFor(actor.getSnapshot().context.bid),
        workload: container({ image: 'dms-test:1', command: ['sh'], cpu: 1, memoryBytes: 64 * 1024 * 1024 }),
        inputs: [],
      },
    })
  /** Locked, contracted and invoked: the run is held by the test. */
  const toRun = async () => {
    actor.send({ type: 'LOCK' })
    await reaches('locked')
    actor.send({ type: 'SIGN', contractId: 'contract-1', contractHash: 'h' })
    invoke()
    await reaches('provisioning')
    return fakes.runs.get('alloc-1')!
  }

  beforeEach(() => {
    clock = new ManualClock()
    fakes = new Fakes()
  })
  afterEach(() => actor?.stop())

  it('drives a bid from its reservation through the run to its release', async () => {
    start(bidContext(clock.now()))
    assert.equal(state(), 'reserved')
    const run = await toRun()
    assert.equal(run.input.allocation.diskBytes, 256 * 1024 * 1024, 'the disk quota the ledger holds')
    run.started()
    await reaches('running')
    run.finish(completedRun())
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(states(), [
      'reserved',
      'locked',
      'contracted',
      'provisioning',
      'running',
      'publishing',
      'completed',
      'released',
    ])
    const lockedUntil = actor.getSnapshot().context.invokeBy
    assert.deepEqual(fakes.calls, [
      `lock bid-1 until ${lockedUntil}`,
      'allocate bid-1',
      'execute alloc-1',
      'publish completed',
      'release bid-1',
    ])
    assert.equal(fakes.delivered.length, 1, 'the result is delivered')
    assert.equal(fakes.delivered[0].update?.state, 'completed', 'after the outcome update')
    assert.equal(actor.getSnapshot().context.message, undefined, 'the final record keeps no output')
    assert.equal(actor.getSnapshot().context.result?.status, 'completed')
  })

  it('heartbeats go on after the run until its result is delivered (a restarting requester hears them)', async () => {
    start(bidContext(clock.now()))
    const run = await toRun()
    run.started()
    await reaches('running')
    let deliver!: () => void
    fakes.holdDelivery = new Promise<void>((r) => (deliver = r))
    run.finish(completedRun())
    await reaches('completed')
    assert.equal(fakes.heartbeats.at(-1), '+completed', 'still heartbeating while the result is undelivered')
    deliver()
    await waitFor(actor, (s) => s.status === 'done')
    assert.equal(fakes.heartbeats.at(-1), '-completed', 'stopped once delivered')
  })

  it('a result its requester fetched again (/dms/job/result-again) counts as delivered: delivery stops, released', async () => {
    start(bidContext(clock.now()))
    const run = await toRun()
    run.started()
    await reaches('running')
    // The requester is down: the delivery keeps retrying (held here for ever).
    fakes.holdDelivery = new Promise<void>(() => {})
    run.finish(completedRun())
    await reaches('completed')
    await clock.advanceAsync(0)
    assert.equal(fakes.heartbeats.at(-1), '+completed')
    actor.send({ type: 'FETCHED' })
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(states().slice(-2), ['completed', 'released'])
    assert.equal(fakes.heartbeats.at(-1), '-completed', 'no more heartbeats either')
  })

  it('releases a reservation at the bid expiry, a lock at its deadlines', async () => {
    const now = clock.now()
    start(bidContext(now))
    await clock.advanceAsync(30_000)
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(states(), ['reserved', 'expired', 'released'])
    assert.equal(actor.getSnapshot().context.history[1].detail, 'the bid expired unlocked')
    assert.deepEqual(fakes.calls, ['release bid-1'])

    fakes.calls.length = 0
    start(bidContext(clock.now()))
    actor.send({ type: 'LOCK' })
    await reaches('locked')
    actor.send({ type: 'SIGN', contractId: 'c', contractHash: 'h' })
    await clock.advanceAsync(59_999)
    assert.equal(state(), 'contracted')
    await clock.advanceAsync(1)
    await waitFor(actor, (s) => s.status === 'done')
    assert.match(actor.getSnapshot().context.history.at(-2)!.detail!, /no invocation within 60 s of the lock/)
    assert.equal(fakes.calls.at(-1), 'release bid-1')
  })

  it('a lock not followed by its contract within the contract window is released', async () => {
    start(bidContext(clock.now()))
    actor.send({ type: 'LOCK' })
    await reaches('locked')
    await clock.advanceAsync(14_999)
    assert.equal(state(), 'locked')
    await clock.advanceAsync(1)
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(states(), ['reserved', 'locked', 'expired', 'released'])
    assert.equal(actor.getSnapshot().context.history[2].detail, 'no contract within 15 s of the lock')
    assert.equal(fakes.calls.at(-1), 'release bid-1')
  })

  it('a lock the ledger refuses ends the bid, and says why', async () => {
    start(bidContext(clock.now()))
    fakes.failNext.lock = 'RESERVATION_EXPIRED'
    actor.send({ type: 'LOCK' })
    await waitFor(actor, (s) => s.status === 'done')
    assert.equal(actor.getSnapshot().context.refusal?.code, 'RESERVATION_EXPIRED')
    assert.deepEqual(states(), ['reserved', 'expired', 'released'])
  })

  it('a lock with the contract (folded): locked and contracted in one step, the history says both', async () => {
    const now = clock.now()
    start(bidContext(now))
    const snaps: string[] = []
    actor.subscribe((s) => snaps.push(flatState(s.value)))
    actor.send({ type: 'LOCK', sign: { contractId: 'c', contractHash: 'h' } })
    await reaches('contracted')
    assert.deepEqual(snaps, ['locking', 'contracted'], 'never seen (nor stored) as only locked')
    assert.deepEqual(states(), ['reserved', 'locked', 'contracted'])
    const ctx = actor.getSnapshot().context
    assert.equal(ctx.contractId, 'c')
    assert.equal(ctx.contractHash, 'h')
    assert.equal(ctx.signing, undefined)
    assert.equal(ctx.lockedAt, now)
    assert.deepEqual(
      fakes.calls.map((c) => c.split(' until')[0]),
      ['lock bid-1'],
    )
    // The invocation deadline counts from the lock, as for a lock then a sign.
    await clock.advanceAsync(59_999)
    assert.equal(state(), 'contracted')
    await clock.advanceAsync(1)
    await waitFor(actor, (s) => s.status === 'done')
    assert.match(actor.getSnapshot().context.history.at(-2)!.detail!, /no invocation within 60 s of the lock/)
  })

  it('a folded lock the ledger refuses ends the bid without a contract, and says why', async () => {
    start(bidContext(clock.now()))
    fakes.failNext.lock = 'RESERVATION_EXPIRED'
    actor.send({ type: 'LOCK', sign: { contractId: 'c', contractHash: 'h' } })
    await waitFor(actor, (s) => s.status === 'done')
    const ctx = actor.getSnapshot().context
    assert.equal(ctx.refusal?.code, 'RESERVATION_EXPIRED')
    assert.equal(ctx.contractId, undefined)
    assert.equal(ctx.signing, undefined)
    assert.deepEqual(states(), ['reserved', 'expired', 'released'])
  })

  it('restored mid-lock with the contract: only locked (no countersignature reached the requester), waiting for its contract', async () => {
    start(bidContext(clock.now()))
    fakes.holdLocks = true
    actor.send({ type: 'LOCK', sign: { contractId: 'c', contractHash: 'h' } })
    await reaches('locking')
    const stored = actor.getSnapshot().context
    actor.stop()
    fakes.holdLocks = false
    start({ ...stored, resume: 'locking' })
    await reaches('locked')
    assert.equal(actor.getSnapshot().context.contractId, undefined)
    assert.equal(actor.getSnapshot().context.signing, undefined)
    // The requester restored in `contracting` sends the same terms: the lock takes them.
    actor.send({ type: 'SIGN', contractId: 'c', contractHash: 'h' })
    assert.equal(state(), 'contracted')
  })

  it('a bid given up by its requester, or cancelled before its run, is released at once', async () => {
    start(bidContext(clock.now()))
    actor.send({ type: 'LOCK' })
    await reaches('locked')
    actor.send({ type: 'RELEASE', reason: 'given up by its requester' })
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(states(), ['reserved', 'locked', 'withdrawn', 'released'])

    start(bidContext(clock.now()))
    actor.send({ type: 'LOCK' })
    await reaches('locked')
    actor.send({ type: 'SIGN', contractId: 'c', contractHash: 'h' })
    actor.send({ type: 'CANCEL', reason: 'cancelled by the requester' })
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(states(), ['reserved', 'locked', 'contracted', 'cancelled', 'released'])
    assert.equal(fakes.delivered.length, 0, 'nothing ran: no result')
  })

  it('a cancel during the run reaches the run, whose cancelled result is published', async () => {
    start(bidContext(clock.now()))
    const run = await toRun()
    run.started()
    await reaches('running')
    actor.send({ type: 'CANCEL', reason: 'cancelled by the requester' })
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(run.cancels, ['cancelled by the requester'])
    assert.equal(actor.getSnapshot().context.result?.status, 'cancelled')
    assert.ok(states().includes('cancelled'))
  })

  it('provisioning past its budget fails the allocation, saying where it stood, and releases it', async () => {
    start(bidContext(clock.now()))
    actor.send({ type: 'LOCK' })
    await reaches('locked')
    actor.send({ type: 'SIGN', contractId: 'contract-1', contractHash: 'h' })
    actor.send({
      type: 'INVOKE',
      allocation: {
        allocationId: 'alloc-1',
        contract: contractFor(actor.getSnapshot().context.bid),
        workload: container({ image: 'dms-test:1', command: ['sh'], cpu: 1, memoryBytes: 64 * 1024 * 1024 }),
        inputs: [{ path: 'a', sha256: 'ef'.repeat(32), size: 1000 }],
      },
    })
    await reaches('provisioning')
    assert.equal(actor.getSnapshot().context.allocation?.provisionBy, clock.now() + 300_000)
    await clock.advanceAsync(299_999)
    assert.equal(state(), 'provisioning')
    await clock.advanceAsync(1)
    await waitFor(actor, (s) => s.status === 'done')
    const ctx = actor.getSnapshot().context
    assert.equal(ctx.result?.status, 'failed')
    assert.equal(ctx.result?.reason, 'provisioning did not finish within 300 s: the inputs were not staged')
    assert.deepEqual(states().slice(3), ['provisioning', 'publishing', 'failed', 'released'])
    assert.deepEqual(fakes.calls.slice(-2), ['publish failed', 'release bid-1'])
    assert.equal(fakes.delivered.length, 1, 'the failed receipt goes to the requester')
    // A run that had staged its inputs but whose container did not start says so.
    start(bidContext(clock.now(), { bidId: 'bid-2' }))
    const run = await toRun()
    run.send({ type: 'STAGED', detail: 'inputs staged: 0 files' })
    await clock.advanceAsync(300_000)
    await waitFor(actor, (s) => s.status === 'done')
    assert.match(actor.getSnapshot().context.result!.reason!, /: the container did not start$/)
  })

  it('invoked before its slot, waits (alive, no provisioning deadline) and allocates once the ledger lets it', async () => {
    start(bidContext(clock.now()))
    actor.send({ type: 'LOCK' })
    await reaches('locked')
    actor.send({ type: 'SIGN', contractId: 'contract-1', contractHash: 'h' })
    fakes.failNext.allocate = 'INSUFFICIENT_RESOURCES'
    const contract = contractFor(actor.getSnapshot().context.bid)
    const startBy = clock.now() + 900_000
    actor.send({
      type: 'INVOKE',
      allocation: {
        allocationId: 'alloc-1',
        contract: { ...contract, terms: { ...contract.terms, startBy } },
        workload: container({ image: 'dms-test:1', command: ['sh'], cpu: 1, memoryBytes: 64 * 1024 * 1024 }),
        inputs: [],
      },
    })
    await reaches('waiting')
    // Longer than the provisioning budget: waiting is not provisioning.
    await clock.advanceAsync(400_000)
    assert.equal(state(), 'waiting')
    // Restored after a restart, it waits again, without a second step in its history.
    const stored = actor.getSnapshot().context
    actor.stop()
    start({ ...stored, resume: 'waiting' })
    assert.equal(state(), 'waiting')
    fakes.slots.free()
    await reaches('provisioning')
    assert.equal(
      actor.getSnapshot().context.allocation?.provisionBy,
      clock.now() + 300_000,
      'provisioning gets its whole budget when it leaves waiting',
    )
    assert.deepEqual(states(), ['reserved', 'locked', 'contracted', 'waiting', 'provisioning'])
    assert.deepEqual(fakes.calls.slice(-3), ['allocate bid-1', 'allocate bid-1', 'execute alloc-1'])
  })

  it('a waiting allocation whose startBy passes expires, saying so, and is released', async () => {
    start(bidContext(clock.now()))
    actor.send({ type: 'LOCK' })
    await reaches('locked')
    actor.send({ type: 'SIGN', contractId: 'contract-1', contractHash: 'h' })
    fakes.failNext.allocate = 'INSUFFICIENT_RESOURCES'
    const contract = contractFor(actor.getSnapshot().context.bid)
    actor.send({
      type: 'INVOKE',
      allocation: {
        allocationId: 'alloc-1',
        contract: { ...contract, terms: { ...contract.terms, startBy: clock.now() + 60_000 } },
        workload: container({ image: 'dms-test:1', command: ['sh'], cpu: 1, memoryBytes: 64 * 1024 * 1024 }),
        inputs: [],
      },
    })
    await reaches('waiting')
    await clock.advanceAsync(59_999)
    assert.equal(state(), 'waiting')
    await clock.advanceAsync(1)
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(states().slice(-3), ['waiting', 'expired', 'released'])
    assert.match(
      actor.getSnapshot().context.ending ?? '',
      /^START_DEADLINE_PASSED: .*its slot did not come in time/,
    )
    assert.equal(fakes.calls.at(-1), 'release bid-1')
  })

  it('restored, a machine goes back to its state with its deadlines, without a second step in its history', async () => {
    start(bidContext(clock.now()))
    actor.send({ type: 'LOCK' })
    await reaches('locked')
    actor.send({ type: 'SIGN', contractId: 'c', contractHash: 'h' })
    const stored = actor.getSnapshot().context
    actor.stop()
    await clock.advanceAsync(30_000)
    start({ ...stored, resume: 'contracted' })
    assert.equal(state(), 'contracted')
    assert.deepEqual(states(), ['reserved', 'locked', 'contracted'])
    // The invocation deadline is the stored one: 60 s after the lock, 30 s from now.
    await clock.advanceAsync(29_999)
    assert.equal(state(), 'contracted')
    await clock.advanceAsync(1)
    await waitFor(actor, (s) => s.status === 'done')
    assert.equal(actor.getSnapshot().context.history.at(-2)?.state, 'expired')
  })

  it('restored mid-run, the run is told so (it re-attaches) and the history goes on', async () => {
    start(bidContext(clock.now()))
    const run = await toRun()
    run.started()
    await reaches('running')
    const stored = actor.getSnapshot().context
    actor.stop()
    fakes.calls.length = 0
    start({ ...stored, resume: 'running' })
    assert.equal(state(), 'running')
    assert.deepEqual(fakes.calls, ['execute alloc-1 restored in running'])
    const again = fakes.runs.get('alloc-1')!
    again.send({ type: 'STARTED', detail: 're-attached after a restart' })
    again.finish()
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(
      actor
        .getSnapshot()
        .context.history.map((h) => [h.state, h.detail])
        .slice(3, 6),
      [
        ['provisioning', undefined],
        ['running', undefined],
        ['running', 're-attached after a restart'],
      ],
    )
  })
})
