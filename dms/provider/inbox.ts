/**
 * The provider's inbox: its actor on INBOX.provider, subscribed to the bid request topic, with
 * one handler per message (handlers/) and the gate that judges bid requests as gossipsub
 * validates them. Built by `ProviderService.start`; stopping the actor stops the answers.
 */
import type { EventEmitter } from 'node:events'
import type { Actor } from '../../actors/system.js'
import { W } from '../protocol/behaviours.js'
import { BID_REQUEST_TOPIC, INBOX } from '../protocol/handles.js'
import type { BidBook } from './bid-book.js'
import { BidRequestGate } from './bid-request-gate.js'
import type { ProviderBooks } from './books.js'
import { bidReleaseHandler } from './handlers/bid-release.js'
import { bidRequestHandler, type BidRequestCounters } from './handlers/bid-request.js'
import { cancelHandler } from './handlers/cancel.js'
import { contractSignHandler } from './handlers/contract-sign.js'
import { invokeHandler } from './handlers/invoke.js'
import { jobRequestHandler } from './handlers/job-request.js'
import { resultAgainHandler } from './handlers/result-again.js'
import { settledHandler } from './handlers/settled.js'
import type { ImageCheck } from './images.js'
import type { KeptResults } from './kept-results.js'
import { slotsOf } from './later-bid.js'
import type { ProviderComponents } from './components.js'
import type { ProviderEvents } from './provider-events.js'
import type { ProviderInit } from './provider-init.js'

export interface InboxComponents extends ProviderComponents {
  book: BidBook
  books: ProviderBooks
  results: KeptResults
  images: ImageCheck
  events: EventEmitter<ProviderEvents>
  peerId: () => string
  /** Why bid requests are declined now (a mode, a graceful stop), or undefined. */
  refusal: () => string | undefined
  counts: BidRequestCounters
}

/** Spawns the provider's actor and registers its handlers; returns it (stop it to stop answering). */
export function startInbox(c: InboxComponents, init: ProviderInit & { provisionTimeoutMs: number }): Actor {
  const d = { ...c }
  const gate = new BidRequestGate(
    { ...d, ignored: c.counts.ignored },
    { contractDb: init.contractDb, bidRequestRate: init.bidRequestRate },
  )
  // Judged as gossipsub validates them, before they are delivered or forwarded to other peers.
  c.system.admit(BID_REQUEST_TOPIC, gate.admission)
  const bidRequest = bidRequestHandler(
    { ...d, gate, mode: { refusal: c.refusal } },
    {
      contractDb: init.contractDb,
      bidTtlMs: init.bidTtlMs,
      preferences: init.preferences,
      requesterCap: init.requesterCap,
      defaultDiskBytes: init.defaultDiskBytes,
      maxUnpaidJobs: init.maxUnpaidJobs,
      price: init.price,
      slots: slotsOf(init),
    },
    c.counts,
  )
  const actor: Actor = c.system
    .spawn(INBOX.provider, c.key)
    .subscribe(BID_REQUEST_TOPIC)
    .on(W.bidRequest, (m) => bidRequest(actor, m))
    // Push orchestration: the same request sent straight here; the same checks and answer.
    .on(W.directBidRequest, (m) => bidRequest(actor, m))
    .on(W.jobRequest, jobRequestHandler(d))
    .on(W.contractSign, contractSignHandler({ ...d, contractDb: init.contractDb }))
    .on(W.invoke, invokeHandler({ ...d, contractDb: init.contractDb, ...init.preferences }))
    .on(W.cancel, cancelHandler(d))
    .on(W.resultAgain, resultAgainHandler({ ...d, contractDb: init.contractDb }))
    .on(W.bidRelease, bidReleaseHandler(d))
    .on(W.settled, settledHandler({ contractDb: init.contractDb, books: c.books }))
  return actor
}
