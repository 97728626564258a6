/**
 * The per-requester cap: how much of the offer one requester may hold here in bids not yet
 * invoked (reserved, locked, or contracted and waiting for their invocation). Locks and contracts
 * count, not only reservations: a requester that locked bid after bid would otherwise hold the
 * whole offer without paying for any of it. A requester holding nothing may still reserve one bid
 * over its share (a job as large as the offer), but that reservation, until it is locked, gives
 * way to another requester's request within its own share (`toPreempt`): a requester that asks
 * for the whole offer again and again without locking holds nothing another needs (issue 29).
 * Spec: specs/protocol.md ("Checks on the receiving side").
 */
import { REQUESTER_CAP_REASON } from '../protocol/messages.js'
import { add, DIMENSIONS, fits, sum } from '../resources/math.js'
import type { Resources } from '../resources/types.js'

/** How much one requester may hold in bids not yet invoked (specs/config.md). */
export interface RequesterCap {
  /** Share of the offer (each resource) one requester's held bids may add up to. @default 0.5 */
  maxReservedShare?: number
  /** Bids (reserved, locked or contracted, not yet invoked) one requester may hold. @default 100 */
  maxOpenBids?: number
}

/**
 * Why a requester holding `held` may not reserve `want` more, or undefined: at most `maxOpenBids`
 * held bids, adding up to at most `maxReservedShare` of the offer in every resource. A requester
 * holding nothing here may always reserve one, so a job as large as the offer can still get a bid.
 */
export function overCap(
  held: Resources[],
  want: Resources,
  offer: Resources,
  cap: RequesterCap = {},
): string | undefined {
  if (held.length === 0) return undefined
  const maxOpen = cap.maxOpenBids ?? 100
  if (held.length >= maxOpen)
    return `${REQUESTER_CAP_REASON} ${held.length} open bids held here, at most ${maxOpen} per requester`
  const share = cap.maxReservedShare ?? 0.5
  const after = add(sum(held), want)
  const over = DIMENSIONS.find((d) => after[d] > offer[d] * share + 1e-9)
  if (over === undefined) return undefined
  return `${REQUESTER_CAP_REASON} ${over} reserved for this requester would be ${after[over]} of ${offer[over]} offered, at most ${Math.round(share * 100)}% per requester`
}

/** The most one requester's held bids may add up to: `maxReservedShare` of the offer. */
export function shareOf(offer: Resources, cap: RequesterCap = {}): Resources {
  const share = cap.maxReservedShare ?? 0.5
  return {
    cpu: offer.cpu * share,
    memoryBytes: offer.memoryBytes * share,
    diskBytes: offer.diskBytes * share,
    gpus: offer.gpus * share,
  }
}

/** Whether `r` is over `limit` in some resource. */
export const overShare = (r: Resources, limit: Resources): boolean =>
  DIMENSIONS.some((d) => r[d] > limit[d] + 1e-9)

/** A reservation another requester's request may take over (see `toPreempt`). */
export interface Preemptible {
  bidId: string
  held: Resources
}

/**
 * The reservations to release so that a request for `want` fits, or undefined when none may be:
 * only for a requester that stays within its share with it (holding `held`), and only
 * `candidates` (oldest first): reserved, not locked, bids of other requesters that hold more than
 * their share. As few as make it fit in `free`.
 */
export function toPreempt(p: {
  want: Resources
  free: Resources
  held: Resources[]
  offer: Resources
  cap?: RequesterCap
  candidates: Preemptible[]
}): Preemptible[] | undefined {
  if (p.candidates.length === 0 || overShare(add(sum(p.held), p.want), shareOf(p.offer, p.cap)))
    return undefined
  const taken: Preemptible[] = []
  let room = p.free
  for (const c of p.candidates) {
    if (fits(p.want, room)) break
    taken.push(c)
    room = add(room, c.held)
  }
  return fits(p.want, room) ? taken : undefined
}
