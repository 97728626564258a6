/**
 * Records of dms 0.1, moved to today's at start: 0.1 kept each bid (sublevel `provider-bids`, its
 * state a string) and each allocation (sublevel `allocations`) apart; today one record per bid
 * holds its machine's snapshot (bid-store.ts). Each 0.1 bid, with its allocation when it was
 * invoked, becomes one record in the state the machine would be in, and the 0.1 records are
 * deleted in the same atomic batch: running it again finds nothing to do. Spec:
 * specs/state-machines.md ("Records of dms 0.1").
 */
import { STORES } from '../store/tables.js'
import type { Logger } from 'pino'
import type { Handle } from '../../actors/envelope.js'
import type { InputFile } from '../blobs/staging.js'
import { hashDoc } from '../contracts/canonical.js'
import type { Bid, SignedContract } from '../contracts/model.js'
import { termsResources } from '../contracts/terms.js'
import type { LedgerEntry } from '../resources/ledger.js'
import { Repo, type Db } from '../store/db.js'
import type { BidState, HistoryEntry, RunSummary } from './bid-context.js'
import { bidRepo, upgradeBid, type StoredBid, type V2Bid } from './bid-store.js'
import type { V3Request } from './stored-request.js'

/** A bid record as dms 0.1 stored it (sublevel `provider-bids`). */
export interface V01Bid {
  bid: Bid
  request: V3Request
  requester: Handle
  state: 'offered' | 'locked' | 'contracted' | 'invoked' | 'expired' | 'released'
  contractHash?: string
}

/** An allocation record as dms 0.1 stored it (sublevel `allocations`). */
export interface V01Allocation {
  allocationId: string
  jobId: string
  contract: SignedContract
  ledgerId: string
  requester: Handle
  command: string[]
  env: Record<string, string>
  inputs?: InputFile[]
  diskBytes?: number
  state: string
  history: HistoryEntry[]
  result?: RunSummary
}

const OUTCOMES = new Set(['completed', 'failed', 'timed_out', 'cancelled'])

/** Where a 0.1 allocation goes on: a run that may have a container re-attaches to it (or is lost). */
function allocationStateOf(state: string): BidState {
  if (state === 'contracted' || state === 'provisioning') return 'provisioning'
  if (state === 'running' || state === 'publishing') return 'running'
  if (OUTCOMES.has(state)) return state as BidState
  return 'released'
}

/** One 0.1 bid (and its allocation, when it was invoked) as today's record. */
export function fromV01(
  old: { bid?: V01Bid; allocation?: V01Allocation; ledger?: LedgerEntry },
  now: number,
  provisionTimeoutMs = 300_000,
): StoredBid {
  const { allocation: a, ledger } = old
  const bid = old.bid?.bid ?? a!.contract.terms.bid
  const terms = a?.contract.terms
  const context: V2Bid['snapshot']['context'] = {
    bid,
    request: old.bid?.request ?? {
      jobId: bid.jobId,
      resources: bid.resources,
      image: bid.image,
      maxDurationSeconds: bid.maxDurationSeconds,
      maxPrice: bid.total,
      deadline: bid.earliestStart,
      exclude: [],
    },
    requester: a?.requester ?? old.bid!.requester,
    held: ledger?.resources ?? { ...bid.resources, diskBytes: a?.diskBytes ?? bid.resources.diskBytes },
    history: a?.history ?? [],
  }
  const hash = old.bid?.contractHash ?? (terms !== undefined ? hashDoc(terms) : undefined)
  if (hash !== undefined) context.contractHash = hash
  let state: BidState
  if (a !== undefined) {
    context.contractId = terms!.contractId
    context.allocation = {
      allocationId: a.allocationId,
      contract: a.contract,
      command: a.command,
      env: a.env,
      inputs: a.inputs ?? [],
      diskBytes: a.diskBytes ?? termsResources(terms!).diskBytes,
      invokedAt: a.history[0]?.at ?? now,
      // 0.1 gave provisioning no deadline: its budget starts at the migration.
      provisionBy: now + provisionTimeoutMs,
    }
    if (a.result !== undefined) context.result = a.result
    state = allocationStateOf(a.state)
    // 0.1 kept no result message: an ended run has nothing left to deliver.
    if (OUTCOMES.has(state)) context.delivered = true
  } else {
    switch (old.bid!.state) {
      case 'offered':
        state = 'reserved'
        break
      case 'locked':
      case 'contracted':
        state = old.bid!.state
        // 0.1 kept the lock's deadline on its ledger entry only.
        context.lockedAt = ledger?.createdAt ?? now
        context.contractBy = context.invokeBy = ledger?.expiresAt ?? now
        break
      case 'invoked':
        state = 'expired'
        context.ending = 'stored by dms 0.1 as invoked, without its allocation'
        break
      default:
        state = 'released'
        if (old.bid!.state === 'expired')
          context.history = [
            { state: 'expired', at: now, detail: 'stored by dms 0.1' },
            { state: 'released', at: now },
          ]
    }
  }
  const value = state === 'provisioning' || state === 'running' ? { active: state } : state
  return upgradeBid({ v: 2, bidId: bid.bidId, state, at: now, snapshot: { value, context } })
}

/**
 * Moves every 0.1 bid and allocation record to today's records, in one atomic batch. Returns how
 * many bids were moved (0 when there was nothing of 0.1).
 */
export async function migrateV01(
  db: Db,
  opts: { log: Logger; now: number; ledger: LedgerEntry[]; provisionTimeoutMs?: number },
): Promise<number> {
  const oldBids = new Repo<V01Bid>(db, STORES.v01Bids.name)
  const oldAllocations = new Repo<V01Allocation>(db, STORES.v01Allocations.name)
  const bids = await oldBids.values()
  const allocations = await oldAllocations.values()
  if (bids.length === 0 && allocations.length === 0) return 0
  const repo = bidRepo(db)
  const ledger = new Map(opts.ledger.map((e) => [e.id, e]))
  const byBid = new Map(allocations.map((a) => [a.contract.terms.bidId, a]))
  const bidOf = new Map(bids.map((b) => [b.bid.bidId, b]))
  const ids = new Set([...bidOf.keys(), ...byBid.keys()])
  const ops = []
  for (const bidId of ids) {
    const old = { bid: bidOf.get(bidId), allocation: byBid.get(bidId), ledger: ledger.get(bidId) }
    if ((await repo.get(bidId)) === undefined)
      ops.push(repo.putOp(bidId, fromV01(old, opts.now, opts.provisionTimeoutMs)))
  }
  ops.push(
    ...bids.map((b) => oldBids.delOp(b.bid.bidId)),
    ...allocations.map((a) => oldAllocations.delOp(a.allocationId)),
  )
  await db.batch(ops)
  opts.log.info({ bids: bids.length, allocations: allocations.length }, "records of dms 0.1 moved to today's")
  return ids.size
}
