/**
 * `/dms/job/request`: the bid's requester chose it; its reservation becomes a lock (the machine's
 * `LOCK`, the ledger's lock invoked by it). Spec: specs/protocol.md ("Behaviours").
 */
import { RefusedError } from '../../../actors/errors.js'
import type { Message } from '../../../actors/system.js'
import type { JobRequest, JobRequestReply } from '../../protocol/messages.js'
import { described, liveIn, lockBid, mine, type BidLookup } from './common.js'

export function jobRequestHandler(d: { book: BidLookup }) {
  return async (msg: Message<JobRequest>): Promise<JobRequestReply> => {
    const rec = await mine(d.book, msg.payload?.bidId, msg.peer)
    const actor = liveIn(d.book, rec, 'reserved')
    if (actor === undefined) throw new RefusedError('BID_NOT_OPEN', `bid is ${described(d.book, rec)}`)
    const snap = await lockBid(d.book, actor)
    await d.book.persisted(rec.bidId)
    return { locked: true, lockedUntil: snap.context.invokeBy! }
  }
}
