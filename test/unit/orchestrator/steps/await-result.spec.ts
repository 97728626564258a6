/**
 * The `running` step on a simulated clock: the result ends the wait; heartbeats keep a provider
 * alive and silence drops it at the liveness timeout; a provider alive but without a result is
 * dropped at the max duration plus the grace; a restored job keeps its deadlines.
 */
import assert from 'node:assert/strict'
import { every } from '../../../../actors/clock.js'
import { JobFailure } from '../../../../dms/orchestrator/job-machine.js'
import { awaitResultStep } from '../../../../dms/orchestrator/steps/await-result.js'
import { W } from '../../../../dms/protocol/behaviours.js'
import { HEARTBEAT, type JobResult, type JobUpdate } from '../../../../dms/protocol/messages.js'
import { makeContract, makeReceipt, newParty } from '../../../helpers/contracts.js'
import { CONFIG, jobRecord, never, outcome, stepDeps, T0 } from '../../../helpers/steps.js'

const update = (state: string, detail?: string): JobUpdate => ({
  jobId: 'job-1',
  allocationId: 'a-1',
  state,
  at: T0,
  ...(detail !== undefined ? { detail } : {}),
})

const result = { jobId: 'job-1', stdout: 'hi\n' } as JobResult

describe('orchestrator/steps/await-result', () => {
  const running = (at = T0) => jobRecord({ history: [{ state: 'running', at }] })

  it('the result ends the wait, with the updates kept and when the provider was last seen', async () => {
    const f = stepDeps()
    const done = outcome(awaitResultStep(f.deps)(running(), never()))
    await f.clock.advanceAsync(2000)
    f.session.addUpdate(update('running'), f.clock.now())
    await f.clock.advanceAsync(1000)
    f.session.setResult(result)
    const { value } = await done
    assert.equal(value?.result, result)
    assert.deepEqual(
      value?.updates?.map((u) => u.state),
      ['running'],
    )
    assert.equal(value?.lastSeenAt, T0 + 2000)
  })

  it('heartbeats keep the provider alive; silence drops it at the liveness timeout', async () => {
    const f = stepDeps()
    const stopBeats = every(f.clock, 5000, () =>
      f.session.addUpdate(update('running', HEARTBEAT), f.clock.now(), true),
    )
    let ended = false
    const done = outcome(awaitResultStep(f.deps)(running(), never()), f.clock)
    void done.then(() => (ended = true))
    await f.clock.advanceAsync(20_000) // beats at 5, 10, 15, 20 s
    assert.equal(ended, false, 'alive while it beats (every 5 s, timeout 6 s)')
    stopBeats()
    await f.clock.advanceAsync(CONFIG.livenessTimeoutMs)
    const { error, at } = await done
    assert.ok(error instanceof JobFailure)
    assert.equal(error.code, 'PROVIDER_SILENT')
    assert.match(error.message, /silent for 6000 ms/)
    assert.equal(at, T0 + 20_000 + CONFIG.livenessTimeoutMs)
    assert.deepEqual(f.session.updates, [], 'heartbeats are not kept as updates')
  })

  it('a provider that beats but never sends a result is dropped at the max duration plus grace', async () => {
    const f = stepDeps()
    every(f.clock, 5000, () => f.session.addUpdate(update('running', HEARTBEAT), f.clock.now(), true))
    const done = outcome(awaitResultStep(f.deps)(running(), never()), f.clock)
    const deadline = 60_000 + CONFIG.resultGraceMs
    await f.clock.advanceAsync(deadline)
    const { error, at } = await done
    assert.ok(error instanceof JobFailure)
    assert.equal(error.code, 'PROVIDER_SILENT')
    assert.match(error.message, /no result from the provider within 90s/)
    assert.equal(at, T0 + deadline)
  })

  it('restored after a restart: the deadline counts from the stored running stamp, not from now', async () => {
    const f = stepDeps()
    every(f.clock, 5000, () => f.session.addUpdate(update('running', HEARTBEAT), f.clock.now(), true))
    // It has been running for 85 s of its 90 s when the requester comes back.
    const done = outcome(awaitResultStep(f.deps)(running(T0 - 85_000), never()), f.clock)
    await f.clock.advanceAsync(5000)
    const { error, at } = await done
    assert.equal((error as JobFailure).code, 'PROVIDER_SILENT')
    assert.equal(at, T0 + 5000)
  })

  describe('a silent provider is asked for its result again before it is dropped', () => {
    const provider = newParty()
    const contract = makeContract(newParty(), provider, newParty().peer, { jobId: 'job-1' })
    const kept = { ...result, receipt: makeReceipt(contract, provider) }
    // Restored in `running` after the result reached the killed process: nothing comes any more.
    const restored = () =>
      jobRecord({
        history: [{ state: 'running', at: T0 - 1000 }],
        winner: { bidId: contract.terms.bidId, provider: provider.peer, why: 'only bid' },
        contract,
      })

    it('the result the provider kept ends the wait, asked once at the liveness timeout', async () => {
      const f = stepDeps()
      f.actor.answer(W.resultAgain, () => kept)
      const done = outcome(awaitResultStep(f.deps)(restored(), never()), f.clock)
      await f.clock.advanceAsync(CONFIG.livenessTimeoutMs)
      const { value, error, at } = await done
      assert.equal(error, undefined)
      assert.equal(value?.result, kept)
      assert.equal(at, T0 + CONFIG.livenessTimeoutMs)
      const asked = f.actor.of(W.resultAgain)
      assert.equal(asked.length, 1)
      assert.deepEqual(asked[0].payload, { jobId: 'job-1', contractId: contract.terms.contractId })
      assert.equal(asked[0].to?.peer, provider.peer)
    })

    it('restored past its result deadline (the requester was down longer): asked once, then ends the wait', async () => {
      const f = stepDeps()
      f.actor.answer(W.resultAgain, () => kept)
      // Running since 100 s: past the 60 s max duration plus the 30 s grace at restore.
      const late = jobRecord({ ...restored(), history: [{ state: 'running', at: T0 - 100_000 }] })
      const done = outcome(awaitResultStep(f.deps)(late, never()), f.clock)
      await f.clock.advanceAsync(0)
      const { value, error, at } = await done
      assert.equal(error, undefined)
      assert.equal(value?.result, kept)
      assert.equal(at, T0, 'at once, not after a liveness timeout')
      assert.equal(f.actor.of(W.resultAgain).length, 1)
    })

    it('refused (NO_RESULT) or of another contract: PROVIDER_SILENT as before', async () => {
      for (const answer of [
        () => Promise.reject(new Error('NO_RESULT')),
        () => ({
          ...kept,
          receipt: makeReceipt(makeContract(newParty(), provider, newParty().peer), provider),
        }),
      ]) {
        const f = stepDeps()
        f.actor.answer(W.resultAgain, answer)
        const done = outcome(awaitResultStep(f.deps)(restored(), never()), f.clock)
        await f.clock.advanceAsync(CONFIG.livenessTimeoutMs)
        const { error } = await done
        assert.equal((error as JobFailure).code, 'PROVIDER_SILENT')
        assert.equal(f.actor.of(W.resultAgain).length, 1)
      }
    })
  })

  it('a cancel ends the wait with the abort reason, leaving no timer armed', async () => {
    const f = stepDeps()
    const ac = new AbortController()
    const done = outcome(awaitResultStep(f.deps)(running(), ac.signal))
    await f.clock.advanceAsync(1000)
    ac.abort(new Error('cancelled'))
    const { error } = await done
    assert.match((error as Error).message, /cancelled/)
    assert.equal(f.clock.pending, 0)
  })
})
