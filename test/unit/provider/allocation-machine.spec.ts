import assert from 'node:assert/strict'
import {
  IllegalTransitionError,
  nextAllocationState,
  type AllocationState,
} from '../../../dms/provider/allocation-machine.js'

const walk = (from: AllocationState, ...to: AllocationState[]) =>
  to.reduce<AllocationState>((s, t) => nextAllocationState(s, t), from)

describe('provider/allocation-machine', () => {
  it('a fresh run and a re-attached run reach released through the machine', () => {
    assert.equal(
      walk('contracted', 'provisioning', 'running', 'publishing', 'completed', 'released'),
      'released',
    )
    assert.equal(walk('running', 'running', 'publishing', 'timed_out', 'released'), 'released')
    assert.equal(walk('running', 'provisioning', 'running', 'publishing', 'cancelled'), 'cancelled')
  })

  it('refuses transitions the machine does not have', () => {
    for (const [from, to] of [
      ['released', 'running'],
      ['completed', 'publishing'],
      ['contracted', 'completed'],
      ['running', 'contracted'],
    ] as Array<[AllocationState, AllocationState]>)
      assert.throws(() => nextAllocationState(from, to), IllegalTransitionError, `${from} -> ${to}`)
  })
})
