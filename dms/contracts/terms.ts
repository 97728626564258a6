/**
 * What contract terms say of what was bid for, read from one place: the terms reference the
 * provider's signed bid they embed and copy none of it. Terms stored by earlier versions carry
 * signed copies of the bid's resources, image and max duration; those were checked equal to the
 * bid (consistency.ts) and are read as they were signed, never rewritten. Spec: specs/protocol.md
 * ("Contract closure").
 */
import type { Resources } from '../resources/types.js'
import type { ContractTerms } from './model.js'

/** The terms' fields these accessors read: a copy where earlier terms carry one, and the bid. */
export type BidTerms = Pick<ContractTerms, 'resources' | 'image' | 'maxDurationSeconds'> & {
  bid: Pick<ContractTerms['bid'], 'resources' | 'image' | 'maxDurationSeconds'>
}

/** The resources contracted for: the embedded bid's (an earlier version's copy, where there is one). */
export function termsResources(t: BidTerms): Resources {
  return t.resources ?? t.bid.resources
}

/** The image contracted for: the embedded bid's (an earlier version's copy, where there is one). */
export function termsImage(t: BidTerms): string {
  return t.image ?? t.bid.image
}

/** The max duration in seconds: the embedded bid's (an earlier version's copy, where there is one). */
export function termsMaxDuration(t: BidTerms): number {
  return t.maxDurationSeconds ?? t.bid.maxDurationSeconds
}

/** What contract terms are for, as the accessors above read it. */
export interface Contracted {
  resources: Resources
  image: string
  maxDurationSeconds: number
}

/** What terms `t` contract for: the embedded bid's resources, image and max duration. */
export function contractedFor(t: BidTerms): Contracted {
  return { resources: termsResources(t), image: termsImage(t), maxDurationSeconds: termsMaxDuration(t) }
}
