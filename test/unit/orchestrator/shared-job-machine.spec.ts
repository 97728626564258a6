import assert from 'node:assert/strict'
import { createActor, waitFor } from 'xstate'
import { ManualClock } from '../../../actors/clock.js'
import type { JobSteps, Step } from '../../../dms/orchestrator/job-machine.js'
import { bindJobSteps, jobMachineFor } from '../../../dms/orchestrator/shared-job-machine.js'
import { jobRecord, T0 } from '../../helpers/steps.js'

/** Steps whose bidding step says which job's steps ran (by `tag`), then finds no bid. */
function steps(tag: string, seen: string[]): JobSteps {
  const never: Step = () => new Promise(() => {})
  return {
    waitUntilStart: never,
    waitForCapacity: never,
    collectBids: (job) => {
      seen.push(`${tag}:${job.id}`)
      return Promise.resolve({ bids: [] })
    },
    requestLock: never,
    closeContract: never,
    invoke: never,
    awaitResult: never,
    verify: never,
    settle: never,
    cancel: never,
  }
}

describe('orchestrator/shared-job-machine', () => {
  it('one machine per clock, each job running its own steps', async () => {
    const clock = new ManualClock(T0)
    assert.equal(jobMachineFor(clock), jobMachineFor(clock))
    assert.notEqual(jobMachineFor(clock), jobMachineFor(new ManualClock(T0)))
    const seen: string[] = []
    const a = createActor(jobMachineFor(clock), { clock, input: jobRecord({ id: 'job-a' }) })
    const b = createActor(jobMachineFor(clock), { clock, input: jobRecord({ id: 'job-b' }) })
    bindJobSteps(a, steps('A', seen))
    bindJobSteps(b, steps('B', seen))
    b.start()
    a.start()
    const [sa, sb] = await Promise.all([
      waitFor(a, (s) => s.status === 'done'),
      waitFor(b, (s) => s.status === 'done'),
    ])
    assert.deepEqual(seen.sort(), ['A:job-a', 'B:job-b'])
    assert.equal(sa.value, 'failed')
    assert.equal(sa.context.error?.code, 'NO_BIDS')
    assert.equal(sb.context.error?.code, 'NO_BIDS')
  })

  it('a job started without its steps fails, never running another job’s', async () => {
    const clock = new ManualClock(T0)
    const seen: string[] = []
    const bound = createActor(jobMachineFor(clock), { clock, input: jobRecord({ id: 'job-a' }) })
    bindJobSteps(bound, steps('A', seen))
    const unbound = createActor(jobMachineFor(clock), { clock, input: jobRecord({ id: 'job-x' }) })
    unbound.start()
    const s = await waitFor(unbound, (x) => x.status === 'done')
    assert.equal(s.value, 'failed')
    assert.match(s.context.error?.message ?? '', /without bindJobSteps/)
    assert.deepEqual(seen, [])
  })
})
