/**
 * The per-requester cap: how much of the offer one requester may hold here in bids not yet
 * invoked (reserved, locked, or contracted and waiting for their invocation). Locks and contracts
 * count, not only reservations: a requester that locked bid after bid would otherwise hold the
 * whole offer without paying for any of it. Spec: specs/protocol.md ("Checks on the receiving side").
 */
import { REQUESTER_CAP_REASON } from '../protocol/messages.js'
import { add, DIMENSIONS, sum } from '../resources/math.js'
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
