/**
 * What the provider tells the node's other parts (metrics, the REST API's event stream, tests):
 * typed events, so no part reads the provider's stored records to learn them.
 */
import type { EventEmitter } from 'node:events'

export interface ProviderEvents {
  /** A bid the requester gave up was freed early. */
  'bid-released': [bidId: string]
  /** A reservation was taken over by another requester's bid (requester-cap.ts). */
  'bid-preempted': [bidId: string]
  /** A bid request was dropped without an answer, and why (rate limit, approval, malformed...). */
  'bid-request-ignored': [reason: string]
  /**
   * An allocation (an invoked bid) as just stored: its state (`allocationState`), or undefined
   * once its record is pruned. Keyed by bid id, as stored.
   */
  allocation: [bidId: string, state: string | undefined]
}

/** The provider's events, as a part that listens sees them. */
export type ProviderEventsView = Pick<EventEmitter<ProviderEvents>, 'on' | 'off' | 'once'>
