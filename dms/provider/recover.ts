/**
 * What a provider's start finds left by an earlier process: the bids it restored, and the
 * containers of allocations it does not know, removed.
 */
import type { BidBook } from './bid-book.js'
import { RUNNING } from './bid-context.js'
import type { ProviderComponents } from './components.js'

/** What `start` found left by an earlier process. */
export interface RecoverySummary {
  /** Bids stored by dms 0.1, moved to today's records. */
  migrated: number
  /** Live bids restored (each goes on from its stored state). */
  restored: number
  /** Of those, allocations restored mid-run (re-attached to their container, or reported lost). */
  resumedRuns: number
  /** Containers of allocations this provider does not know, removed. */
  orphansRemoved: number
}

/** Removes containers of allocations this provider does not know (left by an earlier process). */
export async function recover(
  c: Pick<ProviderComponents, 'executor' | 'log'>,
  book: Pick<BidBook, 'inStates' | 'size'>,
): Promise<Omit<RecoverySummary, 'migrated'>> {
  const live = book.inStates(RUNNING).map((a) => a.getSnapshot().context)
  const known = new Set(live.flatMap((x) => x.allocation?.allocationId ?? []))
  const summary = {
    restored: book.size,
    resumedRuns: live.filter((x) => x.restoredIn === 'provisioning' || x.restoredIn === 'running').length,
    orphansRemoved: 0,
  }
  try {
    for (const m of await c.executor.listRuns()) {
      if (known.has(m.allocationId)) continue
      await c.executor.removeAllocation(m.allocationId).catch((err: unknown) => {
        c.log.warn({ err, allocationId: m.allocationId }, 'could not remove an orphaned container')
      })
      summary.orphansRemoved++
    }
  } catch (err) {
    // The engine may be down: new bids are declined for that anyway; orphans go at next start.
    c.log.warn({ err }, 'could not look for containers left by an earlier run')
  }
  if (summary.restored + summary.orphansRemoved > 0) c.log.info(summary, 'provider restored')
  return summary
}
