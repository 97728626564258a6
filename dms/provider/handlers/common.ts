/** What the provider's handlers share: finding the bid a message is about, for its own requester. */
import { RefusedError } from '../../../actors/errors.js'
import { bidRecordState, type ContractSigned } from '../bid-context.js'
import type { BidActor, BidBook, BidSnapshot } from '../bid-book.js'
import type { StoredBid } from '../bid-store.js'
import { flatState } from '../bid-store.js'

/** The look-ups of the bid book a handler uses. */
export type BidLookup = Pick<BidBook, 'get' | 'actor' | 'settle' | 'persisted'>

/**
 * The stored bid `bidId` made to `peer`.
 * @throws RefusedError UNKNOWN_BID (no such bid here), NOT_YOUR_BID (made to another requester)
 */
export async function mine(book: BidLookup, bidId: unknown, peer: string): Promise<StoredBid> {
  const rec = typeof bidId === 'string' ? await book.get(bidId) : undefined
  if (rec === undefined) throw new RefusedError('UNKNOWN_BID', `no bid ${String(bidId)} here`)
  if (rec.snapshot.context.requester.peer !== peer)
    throw new RefusedError('NOT_YOUR_BID', 'this bid was made to another requester')
  return rec
}

/** The bid's live machine when it is in `state` now, else undefined. */
export function liveIn(book: BidLookup, rec: StoredBid, state: string): BidActor | undefined {
  const actor = book.actor(rec.bidId)
  return actor !== undefined && flatState(actor.getSnapshot().value) === state ? actor : undefined
}

/** How a bid's state reads in a refusal (the names of the bid record: offered, locked...). */
export function described(book: BidLookup, rec: StoredBid): string {
  const snap = book.actor(rec.bidId)?.getSnapshot()
  return snap === undefined
    ? bidRecordState(rec.state, rec.snapshot.context)
    : bidRecordState(flatState(snap.value), snap.context)
}

/**
 * Locks a reserved bid (`LOCK`, with the contract's terms when the lock is folded into the
 * contract) and waits for the ledger's answer; resolves with the machine's next state.
 * @throws RefusedError LOCK_FAILED (the ledger refused: the bid ended, saying why)
 */
export async function lockBid(book: BidLookup, actor: BidActor, sign?: ContractSigned): Promise<BidSnapshot> {
  actor.send({ type: 'LOCK', ...(sign !== undefined ? { sign } : {}) })
  const snap = await book.settle(actor, (s) => !s.matches('locking'))
  if (snap.matches('locked') || snap.matches('contracted')) return snap
  throw new RefusedError(
    'LOCK_FAILED',
    `cannot lock resources: ${snap.context.refusal?.message ?? snap.context.ending ?? 'the bid ended'}`,
  )
}
