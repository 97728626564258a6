/**
 * Retention of the requester's history (specs/queues.md, "Retention"): ended jobs older than
 * `maxAgeDays`, or beyond the newest `keepLast` ended jobs, are deleted with their index keys,
 * the blobs no stored job uses any more (inputs, output archives) and the grants of those inputs.
 * A job that is not final is never pruned. Ended jobs are found from the index (keys only).
 */
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { BlobService } from '../blobs/service.js'
import { blobsOf } from './job-index.js'
import type { JobId } from './job-record.js'
import { FINAL_STATES, type JobStore, type StoredJob } from './job-store.js'

export interface RetentionPolicy {
  /** Ended jobs created longer ago than this are pruned. */
  maxAgeDays?: number
  /** Only the newest this many ended jobs are kept. */
  keepLast?: number
}

export interface PruneReport {
  pruned: number
  blobsDeleted: number
  grantsRevoked: number
}

/** At most this many jobs are pruned per call (the next call goes on). */
export const PRUNE_BATCH = 10_000

export class Retention {
  private readonly removedListeners = new Set<(job: StoredJob) => void>()

  constructor(
    private readonly c: { store: JobStore; blobs: BlobService; clock: Clock; log: Logger },
    /** Whether a job runs here now (never pruned, whatever its stored state says). */
    private readonly isLive: (id: JobId) => boolean,
  ) {}

  /** Called with each pruned job, after it is deleted. */
  onRemoved(fn: (job: StoredJob) => void): () => void {
    this.removedListeners.add(fn)
    return () => this.removedListeners.delete(fn)
  }

  async prune(policy: RetentionPolicy): Promise<PruneReport> {
    const report: PruneReport = { pruned: 0, blobsDeleted: 0, grantsRevoked: 0 }
    if (policy.maxAgeDays === undefined && policy.keepLast === undefined) return report
    const index = this.c.store.index
    const ended: string[] = []
    for (const s of FINAL_STATES) ended.push(...(await index.positions(s)))
    ended.sort() // oldest first: positions start with the zero-padded creation time
    const cutoff =
      policy.maxAgeDays !== undefined ? this.c.clock.now() - policy.maxAgeDays * 86_400_000 : -Infinity
    const beyond = policy.keepLast !== undefined ? Math.max(0, ended.length - policy.keepLast) : 0
    const due = ended.filter((pos, i) => i < beyond || Number(pos.slice(0, pos.indexOf('!'))) < cutoff)
    for (const pos of due.slice(0, PRUNE_BATCH)) {
      const id = pos.slice(pos.indexOf('!') + 1)
      const job = await this.c.store.get(id)
      if (job === undefined || !FINAL_STATES.includes(job.state) || this.isLive(id)) continue
      await this.c.store.remove(job)
      report.pruned++
      for (const sha of blobsOf(job)) {
        // The inputs were granted to each provider that held a contract for this job.
        for (const peer of providersOf(job)) {
          await this.c.blobs.revoke(peer, sha)
          report.grantsRevoked++
        }
        if ((await index.blobUsers(sha)) > 0) continue
        await this.c.blobs.store.delete(sha)
        report.blobsDeleted++
      }
      for (const fn of this.removedListeners) fn(job)
    }
    if (report.pruned > 0) this.c.log.info(report, 'ended jobs pruned')
    return report
  }
}

const providersOf = (job: StoredJob): string[] => [
  ...new Set([
    ...(job.record.attempts ?? []).map((a) => a.provider),
    ...(job.record.winner !== undefined ? [job.record.winner.provider] : []),
  ]),
]
