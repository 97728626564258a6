/**
 * Runs the contract machine for each contract: a contract's actor is created from its stored
 * record (or, for a new one, from its verified terms), sent one event, and stopped once the
 * change that event makes is written. The database stays the one place a contract's state lives,
 * so a restarted contract-db picks every contract up where its record says (specs/contract-db.md,
 * "States"). Callers serialise operations (the service's queue): one event at a time.
 */
import { createActor, type SnapshotFrom } from 'xstate'
import type { Clock } from '../../actors/clock.js'
import { REFUSAL, refuse } from '../contracts/errors.js'
import type { CloseFacts, DisputeFacts, StartFacts } from './changes.js'
import {
  createContractMachine,
  dataOf,
  WRITING,
  type ContractEffects,
  type ContractEvent,
  type ContractInput,
  type ContractMachine,
} from './contract-machine.js'
import { STORED_STATES, type ContractRecord } from './records.js'
import { DmsError } from '../../actors/errors.js'

type Snapshot = SnapshotFrom<ContractMachine>

/** A stored record the machine cannot resume (a state it does not know). */
export class BadContractRecordError extends DmsError {
  constructor(id: string, state: unknown) {
    super('BAD_CONTRACT_RECORD', `contract ${id} is stored in an unknown state ${String(state)}`)
  }
}

export interface ContractBookComponents {
  /** Time for the machine's timestamps and timers (passed to each actor). */
  clock: Clock
  effects: ContractEffects
}

export class ContractBook {
  readonly machine: ContractMachine

  constructor(private readonly c: ContractBookComponents) {
    this.machine = createContractMachine(c.effects, c.clock)
  }

  /** The machine's snapshot of a stored record (restoring runs no effect). */
  restore(rec: ContractRecord): Snapshot {
    if (!STORED_STATES.includes(rec.state))
      throw new BadContractRecordError(rec.contract?.terms?.contractId, rec.state)
    return this.machine.resolveState({ value: rec.state, context: { data: dataOf(rec) } })
  }

  /**
   * Whether the stored contract accepts an event of `type` in its state (the machine decides).
   * No transition of these events has a guard on their payload, so the type alone answers.
   */
  accepts(rec: ContractRecord, type: CloseFacts['type'] | 'DISPUTE' | 'START'): boolean {
    return this.restore(rec).can({ type } as ContractEvent)
  }

  /** Locks the escrow of a verified contract: resolves with its record, active and stored. */
  propose(input: ContractInput): Promise<ContractRecord> {
    return this.drive(createActor(this.machine, { input, clock: this.c.clock }), { type: 'VERIFY' })
  }

  /**
   * Closes a stored contract (or disputes a claim, or records a start note): resolves with its
   * record as stored.
   */
  close(rec: ContractRecord, facts: CloseFacts | DisputeFacts | StartFacts): Promise<ContractRecord> {
    const snapshot = this.restore(rec)
    // The input is not used when a snapshot is given; it is the record's, for the types.
    const input = { contract: rec.contract, proof: rec.proof, activatedAt: rec.activatedAt }
    return this.drive(createActor(this.machine, { snapshot, input, clock: this.c.clock }), facts)
  }

  /**
   * Starts the actor, sends `event` and waits until the change it plans is written (or was not:
   * then rejects with why). A contract that does not accept the event is refused
   * CONTRACT_NOT_ACTIVE with its state and settlement.
   */
  private drive(actor: ReturnType<typeof createActor<ContractMachine>>, event: ContractEvent) {
    actor.start()
    const from = actor.getSnapshot()
    if (!from.can(event)) {
      actor.stop()
      const id = from.context.data.contract.terms.contractId
      return Promise.reject(
        refuse(REFUSAL.notActive, `contract ${id} is already ${String(from.value)}`, {
          state: from.value,
          settlement: from.context.data.settlement,
        }),
      )
    }
    return new Promise<ContractRecord>((resolve, reject) => {
      let writing = false
      let done = false
      const finish = (s: Snapshot | undefined, err?: unknown) => {
        done = true
        sub.unsubscribe()
        actor.stop()
        if (s === undefined) reject(err instanceof Error ? err : new Error(String(err)))
        else if (s.context.failure !== undefined) reject(s.context.failure)
        else resolve({ ...s.context.data, state: s.value as ContractRecord['state'] })
      }
      const sub = actor.subscribe({
        next: (s) => {
          if (s.hasTag(WRITING)) writing = true
          else if (writing && !done) finish(s)
        },
        error: (err) => finish(undefined, err),
      })
      actor.send(event)
      // Every accepted event leads through a writing state: a machine that skipped it changed
      // a contract without storing it.
      if (!writing && !done)
        finish(undefined, new Error(`contract machine: ${event.type} in ${String(from.value)} wrote nothing`))
    })
  }
}
