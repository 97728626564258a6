/**
 * The results this provider made, kept for a requester that asks for one again
 * (`/dms/job/result-again`, handlers/result-again.ts): one restarted after a result reached it but
 * before it stored it. A result is kept from the moment it is made (before it is sent), and kept
 * `settledKeepMs` more once the contract-db's settlement or termination of its contract is in the
 * books: a requester killed after it settled, but before it stored that, is restored in `running`
 * and asks again. Bounded: the oldest beyond `maxKept`, any older than `maxAgeMs`, and any settled
 * longer than `settledKeepMs` ago are dropped when one is kept or settled (sublevel
 * `provider-results`, keyed by contract id). Spec: specs/protocol.md ("Results asked again").
 */
import { STORES } from '../store/tables.js'
import type { Clock } from '../../actors/clock.js'
import type { JobResult } from '../protocol/messages.js'
import { Repo, type Db } from '../store/db.js'

export interface KeptResult {
  contractId: string
  jobId: string
  /** The contract's requester (peer id): the only one it is given to. */
  requester: string
  result: JobResult
  /** When it was kept (clock ms). */
  at: number
  /** When its contract's settlement (or termination) was kept in the books (clock ms). */
  settledAt?: number
}

export interface KeptResultsInit {
  /** At most this many are kept (the oldest go first). @default 1000 */
  maxKept?: number
  /** Kept at most this long in all. @default 86400000 (a day) */
  maxAgeMs?: number
  /** Kept this long after its contract is settled. @default 3600000 (an hour) */
  settledKeepMs?: number
}

export class KeptResults {
  private readonly repo: Repo<KeptResult>
  private readonly maxKept: number
  private readonly maxAgeMs: number
  private readonly settledKeepMs: number
  /** Contracts settled here whose result was dropped: not kept again by a later transition. */
  private readonly dropped = new Set<string>()

  constructor(
    db: Db,
    private readonly clock: Pick<Clock, 'now'>,
    init: KeptResultsInit = {},
  ) {
    this.repo = new Repo<KeptResult>(db, STORES.providerResults.name)
    this.maxKept = init.maxKept ?? 1000
    this.maxAgeMs = init.maxAgeMs ?? 86_400_000
    this.settledKeepMs = init.settledKeepMs ?? 3_600_000
  }

  /** Keeps the result of `contractId` for `requester` (again: the first copy stays), then prunes. */
  async keep(contractId: string, requester: string, result: JobResult): Promise<void> {
    if (this.dropped.has(contractId) || (await this.repo.get(contractId)) !== undefined) return
    const now = this.clock.now()
    await this.repo.put(contractId, { contractId, jobId: result.jobId, requester, result, at: now })
    await this.prune(now)
  }

  get(contractId: string): Promise<KeptResult | undefined> {
    return this.repo.get(contractId)
  }

  /**
   * The contract is settled (or terminated): its result is kept `settledKeepMs` more, then goes
   * at a later prune; one never kept here is not kept by a later transition either.
   */
  async settled(contractId: string): Promise<void> {
    const kept = await this.repo.get(contractId)
    const now = this.clock.now()
    if (kept === undefined) this.forget(contractId)
    else if (kept.settledAt === undefined) await this.repo.put(contractId, { ...kept, settledAt: now })
    await this.prune(now)
  }

  /** Drops the oldest beyond maxKept, any older than maxAgeMs and any settled too long ago. */
  private async prune(now: number): Promise<void> {
    const all = (await this.repo.values()).sort((a, b) => a.at - b.at)
    const over = Math.max(0, all.length - this.maxKept)
    for (const [i, k] of all.entries()) {
      const gone =
        i < over ||
        k.at <= now - this.maxAgeMs ||
        (k.settledAt !== undefined && k.settledAt <= now - this.settledKeepMs)
      if (!gone) continue
      if (k.settledAt !== undefined) this.forget(k.contractId)
      await this.repo.del(k.contractId)
    }
  }

  private forget(contractId: string): void {
    this.dropped.add(contractId)
    if (this.dropped.size > this.maxKept) this.dropped.delete(this.dropped.values().next().value!)
  }

  async size(): Promise<number> {
    return (await this.repo.values()).length
  }
}
