/**
 * The provider's allocation machine (xstate v5). Spec: specs/state-machines.md ("Provider
 * allocation"). The AllocationRunner does the work (executor calls, receipt, release) and asks this
 * machine for each transition, so no allocation can take a step the machine does not allow. The
 * machine has no context and no timers: its persisted snapshot is the state value kept in the
 * allocation record (`AllocationRecord.state`), restored with `resolveState` after a restart.
 */
import { DmsError } from '../../actors/errors.js'
import { getNextSnapshot, setup, type SnapshotFrom } from 'xstate'

export type AllocationState =
  | 'contracted'
  | 'provisioning'
  | 'running'
  | 'publishing'
  | 'completed'
  | 'failed'
  | 'timed_out'
  | 'cancelled'
  | 'released'

export type AllocationEvent =
  | { type: 'PROVISION' }
  | { type: 'START' }
  | { type: 'PUBLISH' }
  | { type: 'FINISH'; status: 'completed' | 'failed' | 'timed_out' | 'cancelled' }
  | { type: 'RELEASE' }

const finished = { on: { RELEASE: 'released' } } as const

export const allocationMachine = setup({
  types: { events: {} as AllocationEvent },
  guards: {
    is: ({ event }, status: string) => event.type === 'FINISH' && event.status === status,
  },
}).createMachine({
  id: 'allocation',
  initial: 'contracted',
  states: {
    // START from contracted/provisioning: a restarted provider re-attached to a running container.
    contracted: { on: { PROVISION: 'provisioning', START: 'running', PUBLISH: 'publishing' } },
    provisioning: { on: { PROVISION: 'provisioning', START: 'running', PUBLISH: 'publishing' } },
    // PROVISION from running: after a restart the container was created but never started.
    running: { on: { START: 'running', PROVISION: 'provisioning', PUBLISH: 'publishing' } },
    // PUBLISH again: a restart while publishing re-attaches (or reports the run lost) and publishes.
    publishing: {
      on: {
        PUBLISH: 'publishing',
        FINISH: [
          { guard: { type: 'is', params: 'completed' }, target: 'completed' },
          { guard: { type: 'is', params: 'failed' }, target: 'failed' },
          { guard: { type: 'is', params: 'timed_out' }, target: 'timed_out' },
          { guard: { type: 'is', params: 'cancelled' }, target: 'cancelled' },
        ],
      },
    },
    completed: finished,
    failed: finished,
    timed_out: finished,
    cancelled: finished,
    released: { type: 'final' },
  },
})

export class IllegalTransitionError extends DmsError {
  constructor(message: string) {
    super('ILLEGAL_TRANSITION', message)
  }
}

const eventFor = (to: AllocationState): AllocationEvent => {
  switch (to) {
    case 'provisioning':
      return { type: 'PROVISION' }
    case 'running':
      return { type: 'START' }
    case 'publishing':
      return { type: 'PUBLISH' }
    case 'released':
      return { type: 'RELEASE' }
    case 'contracted':
      throw new IllegalTransitionError('no transition leads back to contracted')
    default:
      return { type: 'FINISH', status: to }
  }
}

/**
 * The allocation's next state when it moves from `from` towards `to`, as the machine decides;
 * throws IllegalTransitionError when the machine has no such transition.
 */
export function nextAllocationState(from: AllocationState, to: AllocationState): AllocationState {
  const snap: SnapshotFrom<typeof allocationMachine> = allocationMachine.resolveState({ value: from })
  const event = eventFor(to)
  if (!snap.can(event)) throw new IllegalTransitionError(`allocation cannot go from ${from} to ${to}`)
  const next = getNextSnapshot(allocationMachine, snap, event)
  return next.value
}
