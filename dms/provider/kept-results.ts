/**
 * The results this provider made, kept until their contract is settled (sublevel
 * `provider-results`, keyed by contract id): a requester restarted after a result reached it but
 * before it stored it asks for it again (`/dms/job/result-again`, handlers/result-again.ts). A
 * result is kept from the moment it is made (before it is sent), dropped when the contract-db's
 * settlement or termination of its contract is kept in the books, and bounded: the oldest beyond
 * `maxKept`, and any older than `maxAgeMs`, are dropped when a new one is kept. Spec:
 * specs/protocol.md ("Results asked again").
 */
import type { Clock } from '../../actors/clock.js'
import type { JobResult } from '../protocol/messages.js'
import { Repo, type Db } from '../store/db.js'

export const RESULTS_SUBLEVEL = 'provider-results'

export interface KeptResult {
  contractId: string
  jobId: string
  /** The contract's requester (peer id): the only one it is given to. */
  requester: string
  result: JobResult
  /** When it was kept (clock ms). */
  at: number
}

export interface KeptResultsInit {
  /** At most this many are kept (the oldest go first). @default 1000 */
  maxKept?: number
  /** Kept at most this long unsettled. @default 86400000 (a day) */
  maxAgeMs?: number
}

export class KeptResults {
  private readonly repo: Repo<KeptResult>
  private readonly maxKept: number
  private readonly maxAgeMs: number
  /** Contracts whose result was dropped at settlement: not kept again by a later transition. */
  private readonly dropped = new Set<string>()

  constructor(
    db: Db,
    private readonly clock: Pick<Clock, 'now'>,
    init: KeptResultsInit = {},
  ) {
    this.repo = new Repo<KeptResult>(db, RESULTS_SUBLEVEL)
    this.maxKept = init.maxKept ?? 1000
    this.maxAgeMs = init.maxAgeMs ?? 86_400_000
  }

  /** Keeps the result of `contractId` for `requester` (again: the first copy stays), then prunes. */
  async keep(contractId: string, requester: string, result: JobResult): Promise<void> {
    if (this.dropped.has(contractId) || (await this.repo.get(contractId)) !== undefined) return
    const now = this.clock.now()
    await this.repo.put(contractId, { contractId, jobId: result.jobId, requester, result, at: now })
    const all = (await this.repo.values()).sort((a, b) => a.at - b.at)
    const over = Math.max(0, all.length - this.maxKept)
    for (const [i, k] of all.entries())
      if (i < over || k.at <= now - this.maxAgeMs) await this.repo.del(k.contractId)
  }

  get(contractId: string): Promise<KeptResult | undefined> {
    return this.repo.get(contractId)
  }

  /** Forgets the result of a settled (or terminated) contract. */
  drop(contractId: string): Promise<void> {
    this.dropped.add(contractId)
    if (this.dropped.size > this.maxKept) this.dropped.delete(this.dropped.values().next().value!)
    return this.repo.del(contractId)
  }

  async size(): Promise<number> {
    return (await this.repo.values()).length
  }
}
