/**
 * How the provider stores its bids: one record per bid (sublevel `provider-machines`, keyed by bid
 * id) holding the bid machine's persisted snapshot, written on every transition. Records of ended
 * bids are kept for a bounded time and number, then deleted (`prunable`). Spec:
 * specs/state-machines.md ("Provider bid and allocation").
 */
import { STORES } from '../store/tables.js'
import type { StateValue } from 'xstate'
import { Repo, type Db } from '../store/db.js'
import type { BidContext, BidState } from './bid-context.js'

/** One bid as stored (version 2; 0.1 stored bids and allocations apart: migrate-v01.ts). */
export interface StoredBid {
  v: (typeof STORES)['bids']['version']
  bidId: string
  /** The machine's state, flattened (`provisioning`, not `{ active: 'provisioning' }`). */
  state: BidState
  /** When it was written (ms since the epoch): ended records are pruned by it. */
  at: number
  /**
   * xstate's persisted snapshot without its children: the state value and the context. Every
   * actor a state invokes is invoked again from the context when the machine is restored.
   */
  snapshot: { value: StateValue; context: BidContext }
}

export function bidRepo(db: Db): Repo<StoredBid> {
  return new Repo<StoredBid>(db, STORES.bids.name)
}

/** The flattened state of a machine's state value (`{ active: 'running' }` is `running`). */
export function flatState(value: StateValue): BidState {
  if (typeof value === 'string') return value as BidState
  const [, inner] = Object.entries(value)[0] ?? []
  return flatState(inner ?? 'released')
}

/** How long and how many ended bids are kept (their records serve cancels, `GET /v1/allocations`). */
export interface RetentionInit {
  /** Ended bids older than this are deleted. @default 86400000 (a day) */
  retainEndedMs?: number
  /** At most this many ended bids are kept (the oldest go first). @default 10000 */
  retainEndedCount?: number
}

/**
 * The ids among `ended` (oldest first, with when each ended) that are due for deletion at `now`:
 * older than `retainEndedMs`, or beyond the newest `retainEndedCount`.
 */
export function prunable(
  ended: Array<{ bidId: string; at: number }>,
  now: number,
  init: RetentionInit,
): string[] {
  const maxAge = init.retainEndedMs ?? 86_400_000
  const maxCount = init.retainEndedCount ?? 10_000
  const over = Math.max(0, ended.length - maxCount)
  return ended.filter((e, i) => i < over || e.at <= now - maxAge).map((e) => e.bidId)
}
