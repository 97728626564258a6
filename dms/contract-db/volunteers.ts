/**
 * How many volunteer contracts (escrow 0) each requester has active. A volunteer contract locks
 * no money, so without a bound an approved peer could store them without end (a self-dealing
 * peer signs both sides): the contract-db refuses a requester's volunteer contract beyond
 * `maxActiveVolunteerContracts` (specs/contract-db.md, "Verify", check 10). Counted from the
 * stored records once, then kept up to date as changes are written (in the service's queue).
 */
import type { Change } from './changes.js'
import type { ContractRecord } from './records.js'

export class VolunteerCount {
  private counts?: Map<string, number>

  constructor(private readonly stored: () => Promise<ContractRecord[]>) {}

  async of(requester: string): Promise<number> {
    if (this.counts === undefined) {
      const counts = new Map<string, number>()
      for (const rec of await this.stored())
        if (isVolunteer(rec) && rec.state === 'active') bump(counts, rec.contract.terms.requester.peer, 1)
      this.counts = counts
    }
    return this.counts.get(requester) ?? 0
  }

  /** A change was written: a volunteer contract became active, or left `active`. */
  written(change: Change): void {
    const rec = change.record
    if (this.counts === undefined || !isVolunteer(rec)) return
    const peer = rec.contract.terms.requester.peer
    if (change.to === 'active') bump(this.counts, peer, 1)
    else if (rec.history.at(-2)?.state === 'active') bump(this.counts, peer, -1)
  }
}

const isVolunteer = (rec: ContractRecord) => rec.contract.terms.escrow === 0

function bump(counts: Map<string, number>, peer: string, by: number): void {
  const n = (counts.get(peer) ?? 0) + by
  if (n > 0) counts.set(peer, n)
  else counts.delete(peer)
}
