/**
 * The level backend's count of active volunteer contracts (escrow 0) per requester
 * (`ContractDbStore.activeVolunteers`): counted from the stored contracts once, then moved by
 * each committed transaction's contract writes. Exact because a level folder has one writer, the
 * store, and every write goes through its queue; every service over the store reads the same count.
 */
import type { ContractRecord } from '../records.js'

/** A contract a transaction wrote: its record before (none: new) and after. */
export interface ContractMove {
  old: ContractRecord | undefined
  now: ContractRecord
}

const isActiveVolunteer = (rec: ContractRecord | undefined): rec is ContractRecord =>
  rec?.state === 'active' && rec.contract.terms.escrow === 0

export class VolunteerTally {
  private readonly counts = new Map<string, number>()

  /** Counted from every stored contract. */
  constructor(stored: Iterable<ContractRecord>) {
    for (const rec of stored) if (isActiveVolunteer(rec)) this.bump(rec.contract.terms.requester.peer, 1)
  }

  of(requester: string): number {
    return this.counts.get(requester) ?? 0
  }

  /** A transaction committed these writes. */
  committed(moves: readonly ContractMove[]): void {
    for (const { old, now } of moves) {
      const was = isActiveVolunteer(old)
      const is = isActiveVolunteer(now)
      if (was !== is) this.bump(now.contract.terms.requester.peer, is ? 1 : -1)
    }
  }

  private bump(peer: string, by: number): void {
    const n = (this.counts.get(peer) ?? 0) + by
    if (n > 0) this.counts.set(peer, n)
    else this.counts.delete(peer)
  }
}
