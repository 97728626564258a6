/**
 * `/dms/job/bid-release`: a bid its requester gave up (it lost, or its contract failed before the
 * contract-db locked anything). Its reservation, lock or uninvoked contract is released now (the
 * machine's `RELEASE`) rather than at its deadline. Only its requester can, only before the run.
 * Spec: specs/protocol.md ("Bid selection").
 */
import type { ProviderEvents } from '../provider-events.js'
import type { EventEmitter } from 'node:events'
import type { Message } from '../../../actors/system.js'
import type { BidRelease } from '../../protocol/messages.js'
import { flatState } from '../bid-store.js'
import type { BidLookup } from './common.js'

const RELEASABLE = new Set(['reserved', 'locked', 'contracted'])

export interface BidReleaseDeps {
  book: BidLookup
  /** Hears `bid-released` (bidId) once the bid's resources are free. */
  events: Pick<EventEmitter<ProviderEvents>, 'emit'>
}

export function bidReleaseHandler(d: BidReleaseDeps) {
  return async (msg: Message<BidRelease>): Promise<void> => {
    const bidId = msg.payload?.bidId
    const rec = typeof bidId === 'string' ? await d.book.get(bidId) : undefined
    const ctx = rec?.snapshot.context
    if (rec === undefined || ctx!.requester.peer !== msg.peer || ctx!.bid.jobId !== msg.payload.jobId) return
    const actor = d.book.actor(rec.bidId)
    if (actor === undefined || !RELEASABLE.has(flatState(actor.getSnapshot().value))) return
    actor.send({ type: 'RELEASE', reason: 'given up by its requester' })
    await d.book.settle(actor, (s) => s.status !== 'active')
    d.events.emit('bid-released', rec.bidId)
  }
}
