/**
 * The provider's start note (specs/contract-db.md, "Start notes"): before a contract's container
 * starts, the provider signs a note that it starts the run and sends it to the contract-db, which
 * records it; the run goes on only once it is recorded. A first note past the terms' `startBy` is
 * refused (START_DEADLINE_PASSED: the contract-db expired the contract with a full refund) and the
 * run does not start. A
 * contract without `startBy` (dms 0.1, or a requester that sets none) needs no note.
 */
import type { Clock } from '../../actors/clock.js'
import { DmsError, isCode } from '../../actors/errors.js'
import type { KeyPair } from '../../actors/identity.js'
import type { ContractDbClient } from '../contract-clients/client.js'
import type { SignedContract } from '../contracts/model.js'
import { signStartNote, START_DEADLINE_PASSED } from '../contracts/start.js'

/** The run of a contract must not start: its `startBy` passed. */
export class StartDeadlinePassedError extends DmsError {
  /** What the receipt says (the run is reported failed, not started). */
  readonly peerMessage: string
  constructor(contractId: string, startBy: number, why: string) {
    super(
      START_DEADLINE_PASSED,
      `contract ${contractId} had to start by ${new Date(startBy).toISOString()}: ${why}`,
    )
    this.peerMessage = `${START_DEADLINE_PASSED}: ${this.message}`
  }
}

export interface StartNoteDeps {
  key: KeyPair
  peerId: () => string
  clock: Pick<Clock, 'now'>
  /** The contract-db client of the provider's actor. */
  client(): ContractDbClient
}

/** Sends the start note of `contract` and resolves once the contract-db recorded it. */
export function startNoteSender(d: StartNoteDeps) {
  return async (contract: SignedContract, signal: AbortSignal): Promise<void> => {
    const t = contract.terms
    if (t.startBy === undefined) return
    // Sent even when this node's clock is past startBy: the contract-db decides. A note it recorded
    // before this provider restarted is answered again (the contract is paid for and must run); a
    // first note that late is refused START_DEADLINE_PASSED.
    const note = signStartNote(d.key, d.peerId(), t.contractId, d.clock.now())
    try {
      await d.client().started(note, { signal })
    } catch (err) {
      if (isCode(err, START_DEADLINE_PASSED))
        throw new StartDeadlinePassedError(t.contractId, t.startBy, 'the contract-db expired it')
      throw err
    }
  }
}
