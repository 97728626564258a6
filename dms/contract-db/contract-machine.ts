/**
 * The contract's life in the contract-db (xstate v5). Spec: specs/contract-db.md ("States").
 *
 *   proposed --VERIFY--> active --SETTLE--> settled
 *                               --TERMINATE--> terminated
 *
 * The machine has no context and no timers: its persisted form is its state value, stored in the
 * contract record together with the accounts it moves, in one atomic batch. A restarted service
 * resolves the machine from the stored value, so nothing is lost between lock and settle.
 */
import { setup, transition } from 'xstate'

export type ContractState = 'proposed' | 'active' | 'settled' | 'terminated'
export type ContractEvent = { type: 'VERIFY' } | { type: 'SETTLE' } | { type: 'TERMINATE' }

export const contractMachine = setup({
  types: { events: {} as ContractEvent },
}).createMachine({
  id: 'contract',
  initial: 'proposed',
  states: {
    proposed: { on: { VERIFY: 'active' } },
    active: { on: { SETTLE: 'settled', TERMINATE: 'terminated' } },
    settled: { type: 'final' },
    terminated: { type: 'final' },
  },
})

/** The state after `event`, or undefined when the machine does not allow it from `from`. */
export function nextContractState(
  from: ContractState,
  event: ContractEvent['type'],
): ContractState | undefined {
  const snapshot = contractMachine.resolveState({ value: from, context: {} })
  if (!snapshot.can({ type: event })) return undefined
  const [next] = transition(contractMachine, snapshot, { type: event })
  return next.value
}
