/**
 * How the provider stores its bids: one record per bid (sublevel `provider-machines`, keyed by bid
 * id) holding the bid machine's persisted snapshot, written on every transition. Records of ended
 * bids are kept for a bounded time and number, then deleted (`prunable`). Spec:
 * specs/state-machines.md ("Provider bid and allocation").
 */
import { STORES } from '../store/tables.js'
import type { StateValue } from 'xstate'
import { termsImage, termsResources } from '../contracts/terms.js'
import { Repo, type Db } from '../store/db.js'
import { memberOf, singleMemberOf, type Workload } from '../workload/workload.js'
import type { Allocation, BidContext, BidState } from './bid-context.js'
import { upgradeRequest, type V3Request } from './stored-request.js'

/**
 * One bid as stored (version 4: the request carries the workload's needs; version 3: the
 * allocation holds its workload whole; records of versions 2 and 3 are upgraded as they are read,
 * `upgradeBid`; 0.1 stored bids and allocations apart: migrate-v01.ts).
 */
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

/** A pod member as a version 2 record kept it. */
interface V2Member {
  name: string
  image: string
  network?: boolean
  command: string[]
  env: Record<string, string>
  cpu: number
  memoryBytes: number
}

/** An allocation as a version 2 record (dms before the workload) kept it: the container apart. */
export type V2Allocation = Omit<Allocation, 'workload'> & {
  command: string[]
  env: Record<string, string>
  network?: boolean
  members?: V2Member[]
}

/** A bid record of version 3: its request as protocol 3 sent it (stored-request.ts). */
export type V3Bid = Omit<StoredBid, 'v' | 'snapshot'> & {
  v: 3
  snapshot: { value: StateValue; context: Omit<BidContext, 'request'> & { request: V3Request } }
}

/** A bid record of version 2. */
export type V2Bid = Omit<StoredBid, 'v' | 'snapshot'> & {
  v: 2
  snapshot: {
    value: StateValue
    context: Omit<BidContext, 'allocation' | 'request'> & { request: V3Request; allocation?: V2Allocation }
  }
}

/**
 * The workload of a version 2 allocation: the contract's image and resources with the invoked
 * command, env and network (one member), or the invoked pod's members.
 */
export function workloadOfV2(a: V2Allocation): Workload {
  if (a.members !== undefined && a.members.length > 0) return { members: a.members.map(memberOf) }
  return { members: [singleMemberOf(termsImage(a.contract.terms), a, termsResources(a.contract.terms))] }
}

/**
 * A stored bid at today's version: a version 2 record's allocation gets its workload, then the
 * request of a version 3 record its workload's needs (`upgradeRequest`).
 */
export function upgradeBid(rec: StoredBid | V3Bid | V2Bid): StoredBid {
  if (rec.v === 4) return rec
  const v3 = rec.v === 3 ? rec : upgradeV2(rec)
  const { request, ...context } = v3.snapshot.context
  return {
    ...v3,
    v: 4,
    snapshot: { ...v3.snapshot, context: { ...context, request: upgradeRequest(request) } },
  }
}

/** A version 2 record at version 3: its allocation gets its workload. */
function upgradeV2(rec: V2Bid): V3Bid {
  const { allocation, ...context } = rec.snapshot.context
  if (allocation === undefined) return { ...rec, v: 3, snapshot: { ...rec.snapshot, context } }
  const { command: _c, env: _e, network: _n, members: _m, ...kept } = allocation
  return {
    ...rec,
    v: 3,
    snapshot: {
      ...rec.snapshot,
      context: { ...context, allocation: { ...kept, workload: workloadOfV2(allocation) } },
    },
  }
}

/** The provider's bid records, each read at today's version (`upgradeBid`). */
class BidRepo extends Repo<StoredBid> {
  override async get(key: string): Promise<StoredBid | undefined> {
    const rec = (await super.get(key)) as StoredBid | V3Bid | V2Bid | undefined
    return rec === undefined ? undefined : upgradeBid(rec)
  }
  override async values(): Promise<StoredBid[]> {
    return (await super.values()).map((rec) => upgradeBid(rec as StoredBid | V3Bid | V2Bid))
  }
}

export function bidRepo(db: Db): Repo<StoredBid> {
  return new BidRepo(db, STORES.bids.name)
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
