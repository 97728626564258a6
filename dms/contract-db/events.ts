/**
 * What the contract-db service tells the process's other parts (its metrics, tests): typed events,
 * so that nothing reads the store to learn what was written or refused.
 */
import type { EventEmitter } from 'node:events'
import type { Amount } from '../contracts/money.js'
import type { Change } from './changes.js'

/** The requests a peer sends the contract-db, as its refusals are counted. */
export type CdbRequest = 'verify' | 'settle' | 'terminate' | 'start' | 'approval' | 'funds'

export interface ContractDbEvents {
  /** A contract's change, once written: its record in the state it reached, and the money moved. */
  contract: [change: Change]
  /** An operator's credit, once written. */
  credit: [peer: string, amount: Amount]
  /** A peer's request refused, with the refusal's stable code (specs/contract-db.md). */
  refused: [request: CdbRequest, code: string]
}

/** The service's events, as a part that listens sees them. */
export type ContractDbEventsView = Pick<EventEmitter<ContractDbEvents>, 'on' | 'off'>
