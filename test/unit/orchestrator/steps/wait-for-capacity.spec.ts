/**
 * The `queued` and `scheduled` steps on a simulated clock: a queued job bids again on capacity
 * news that fits (not on news that does not), else after a backoff that doubles and is capped; at
 * its deadline it fails QUEUE_TIMEOUT with every provider's reason; a restored job waits only what
 * is left of its deadline. A scheduled job does not start before its `startAt`.
 */
import assert from 'node:assert/strict'
import { JobFailure } from '../../../../dms/orchestrator/job-machine.js'
import { queueBackoffMs, waitForCapacityStep } from '../../../../dms/orchestrator/steps/wait-for-capacity.js'
import { waitUntilStartStep } from '../../../../dms/orchestrator/steps/wait-until-start.js'
import { CONFIG, jobRecord, never, outcome, stepDeps, T0 } from '../../../helpers/steps.js'

const MiB = 1024 * 1024
const queuedJob = (rounds: number, deadline = T0 + 60_000) => {
  const job = jobRecord({
    queue: {
      deadline,
      rounds,
      declines: [
        {
          jobId: 'job-1',
          provider: '12D3KooWProviderA',
          reasons: ['not enough cpu: need 1 core, free 0 core'],
        },
      ],
    },
  })
  job.spec.queueTimeoutSeconds = 60
  return job
}
/** When the announcers' provider credentials expire (well after these tests). */
const APPROVED_UNTIL = T0 + 3_600_000
const free = (cpu: number) => ({ cpu, memoryBytes: 1024 * MiB, diskBytes: 1024 * MiB, gpus: 0 })

describe('orchestrator/steps/wait-for-capacity', () => {
  it('bids again at once on capacity news that fits; news that does not fit wakes nothing', async () => {
    const f = stepDeps()
    const ended = outcome(waitForCapacityStep(f.deps)(queuedJob(1), never()), f.clock)
    await f.clock.scheduled(queueBackoffMs(1, CONFIG, 'job-1'))
    assert.equal(
      f.capacity.announce('12D3KooWSmall', free(0.5), APPROVED_UNTIL),
      0,
      'half a core does not fit a 1-core job',
    )
    assert.equal(f.capacity.announce('12D3KooWBig', free(1), APPROVED_UNTIL), 1)
    const { value } = await ended
    assert.equal(value?.queue?.wokenBy, 'capacity 12D3KooWBig')
    assert.equal(f.clock.now(), T0, 'woken without waiting for the backoff')
    assert.equal(f.capacity.size, 0)
  })

  it('without news, bids again after a backoff that doubles per round, is capped, and is spread by job', async () => {
    const bases = [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]
    for (const [i, base] of bases.entries()) {
      const waits = ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => queueBackoffMs(i + 1, CONFIG, id))
      for (const w of waits)
        assert.ok(w >= base / 2 && w <= base, `round ${i + 1}: ${w} in [${base / 2}, ${base}]`)
      assert.ok(new Set(waits).size > 1, 'jobs queued together do not all wait the same')
    }
    assert.equal(queueBackoffMs(3, CONFIG, 'job-1'), queueBackoffMs(3, CONFIG, 'job-1'), 'deterministic')
    const f = stepDeps()
    const wait = queueBackoffMs(3, CONFIG, 'job-1')
    const ended = outcome(waitForCapacityStep(f.deps)(queuedJob(3), never()), f.clock)
    await f.clock.scheduled(wait)
    await f.clock.advanceAsync(wait - 1)
    assert.equal(f.capacity.size, 1, 'still waiting just before the backoff')
    await f.clock.advanceAsync(1)
    const { value } = await ended
    assert.equal(value?.queue?.wokenBy, 'backoff')
    assert.equal(f.capacity.size, 0, 'its wait for news ended with it')
  })

  it("fails QUEUE_TIMEOUT at the deadline with the providers' reasons", async () => {
    const f = stepDeps()
    const ended = outcome(waitForCapacityStep(f.deps)(queuedJob(9, T0 + 5000), never()), f.clock)
    await f.clock.scheduled(5000)
    await f.clock.advanceAsync(5000)
    const { error, at } = await ended
    assert.ok(error instanceof JobFailure)
    assert.equal(error.code, 'QUEUE_TIMEOUT')
    assert.match(
      error.message,
      /no provider had room within the queue timeout \(60 s, 9 bid rounds\): roviderA: not enough cpu/,
    )
    assert.equal(error.extra.declines?.[0].provider, '12D3KooWProviderA')
    assert.equal(at, T0 + 5000)
  })

  it('a job restored past its deadline fails at once; before it, waits only what is left', async () => {
    const f = stepDeps()
    const late = await outcome(waitForCapacityStep(f.deps)(queuedJob(1, T0 - 1), never()), f.clock)
    assert.equal((late.error as JobFailure).code, 'QUEUE_TIMEOUT')
    const ended = outcome(waitForCapacityStep(f.deps)(queuedJob(6, T0 + 700), never()), f.clock)
    await f.clock.scheduled(700)
    await f.clock.advanceAsync(700)
    assert.equal(((await ended).error as JobFailure).code, 'QUEUE_TIMEOUT')
  })

  it('a cancel (abort) ends the wait and leaves the queue', async () => {
    const f = stepDeps()
    const cancel = new AbortController()
    const ended = outcome(waitForCapacityStep(f.deps)(queuedJob(1), cancel.signal), f.clock)
    await f.clock.scheduled(queueBackoffMs(1, CONFIG, 'job-1'))
    cancel.abort()
    assert.ok((await ended).error !== undefined)
    assert.equal(f.capacity.size, 0)
    assert.equal(f.capacity.announce('12D3KooWBig', free(4), APPROVED_UNTIL), 0)
  })
})

describe('orchestrator/steps/wait-until-start', () => {
  it('does not return before startAt; a start already past returns at once', async () => {
    const f = stepDeps()
    const job = jobRecord()
    job.spec.startAt = T0 + 90_000
    let done = false
    const ended = waitUntilStartStep(f.deps)(job, never()).then(() => (done = true))
    await f.clock.advanceAsync(89_999)
    assert.equal(done, false)
    await f.clock.advanceAsync(1)
    await ended
    assert.equal(f.clock.now(), T0 + 90_000)
    job.spec.startAt = T0
    assert.deepEqual(await waitUntilStartStep(f.deps)(job, never()), {})
  })

  it('waits in steps of at most a day (timers overflow past 24.8 days)', async () => {
    const f = stepDeps()
    const job = jobRecord()
    job.spec.startAt = T0 + 29 * 86_400_000
    let done = false
    const ended = waitUntilStartStep(f.deps)(job, never()).then(() => (done = true))
    await f.clock.scheduled(86_400_000)
    await f.clock.advanceAsync(29 * 86_400_000)
    await ended
    assert.equal(done, true)
  })
})
