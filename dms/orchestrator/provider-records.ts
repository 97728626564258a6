/**
 * This requester's own record of each provider it used (sublevel `provider-records`): jobs it
 * completed, and faults it was dropped for. Read for every bid ranked (the reliability term of
 * select.ts), so it is read through a cache; the orchestrator is its only writer, once per
 * finished job (`recordOutcome`).
 */
import { STORES } from '../store/tables.js'
import { Repo, type Db } from '../store/db.js'
import type { JobRecord, JobState } from './job-record.js'
import { reliabilityOf, type ProviderRecord } from './select.js'

export type { ProviderRecord }

export interface ProviderRecordsInit {
  /** Providers kept in the cache; it is emptied when full. @default 10000 */
  maxCached?: number
}

export class ProviderRecords {
  readonly repo: Repo<ProviderRecord>
  private readonly cache = new Map<string, ProviderRecord | undefined>()
  private readonly maxCached: number

  constructor(db: Db, init: ProviderRecordsInit = {}) {
    this.repo = new Repo(db, STORES.providerRecords.name)
    this.maxCached = init.maxCached ?? 10_000
  }

  /** A provider's record (undefined for one never used), through the cache. */
  async get(peer: string): Promise<ProviderRecord | undefined> {
    if (!this.cache.has(peer)) {
      const rec = await this.repo.get(peer)
      if (this.cache.size >= this.maxCached) this.cache.clear()
      // A write while this read was on its way wins (it is newer).
      if (!this.cache.has(peer)) this.cache.set(peer, rec)
    }
    return this.cache.get(peer)
  }

  /** The provider's reliability in 0..1 (`reliabilityOf`, 0.5 for one never used). */
  async reliability(peer: string): Promise<number> {
    return reliabilityOf(await this.get(peer))
  }

  /**
   * Records a finished job: each provider dropped for a fault (its `attempts`) gets a fault, and
   * the winner of a completed job a completion.
   */
  async recordOutcome(state: JobState, job: JobRecord): Promise<void> {
    for (const a of job.attempts ?? []) await this.bump(a.provider, 'faults')
    if (state === 'completed' && job.winner !== undefined) await this.bump(job.winner.provider, 'completed')
  }

  private async bump(peer: string, field: keyof ProviderRecord): Promise<void> {
    await this.get(peer) // loaded into the cache; from here to the cache update nothing awaits
    const rec = { ...(this.cache.get(peer) ?? { completed: 0, faults: 0 }) }
    rec[field]++
    this.cache.set(peer, rec)
    await this.repo.put(peer, rec)
  }
}
