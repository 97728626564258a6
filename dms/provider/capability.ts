/**
 * Seed 004's compareCapability / acceptJob: is the job possible here, and does this provider want it.
 */
import { formatAmount } from '../resources/errors.js'
import { DIMENSIONS, sub } from '../resources/math.js'
import type { Resources } from '../resources/types.js'
import { runtimeOfName } from '../workload/artifact-name.js'

export interface CapabilityComparison {
  /** true when every required amount fits in what is available. */
  fits: boolean
  /** available - required per resource (negative where it does not fit). */
  margins: Resources
  /** One human reason per resource that does not fit. */
  reasons: string[]
}

export function compareCapability(required: Resources, available: Resources): CapabilityComparison {
  const margins = sub(available, required)
  const reasons: string[] = []
  for (const d of DIMENSIONS) {
    if (margins[d] < 0)
      reasons.push(
        `not enough ${d === 'memoryBytes' ? 'memory' : d === 'diskBytes' ? 'disk' : d}: need ${formatAmount(d, required[d])}, free ${formatAmount(d, available[d])}`,
      )
  }
  return { fits: reasons.length === 0, margins, reasons }
}

/** Why a job asking for the network is declined (and its invocation refused) where it is not allowed. */
export const NETWORK_REFUSED = 'network not allowed here: the job asks for network access'

/** Why a pod member asking for the network is declined (and its invocation refused). */
export const memberNetworkRefused = (member: string): string =>
  `network not allowed here: member ${member} asks for network access`

/** The provider's preferences, applied after the capability comparison. */
export interface Comparator {
  /** Image patterns this provider runs (`*` wildcard). @default ['*'] */
  allowedImages?: string[]
  /** Whether jobs asking for the network are taken (their containers get a bridge). @default false */
  allowNetwork?: boolean
  /** The job asks for the network. */
  network?: boolean
  /** A pod's members that ask for the network (each is a reason where it is not allowed). */
  networkMembers?: string[]
  /** A pod's other images (after the first, `image`), each judged as the first is. */
  moreImages?: Array<{ image: string; hasImage: boolean }>
  /** Longest job accepted, seconds. @default 86400 */
  maxDurationSeconds?: number
  /** Whether the engine has the image (no registry assumed). */
  hasImage: boolean
  /** This provider's total for the job, and the requester's ceiling. */
  price: number
  maxPrice: number
  /** Peers excluded by the requester. */
  excluded: boolean
  /** Lowest total this provider works for. @default 0 */
  minPrice?: number
  /** The requester's peer id, checked against the allow/deny lists. */
  requester?: string
  /** Requesters served (empty or absent: any). */
  allowRequesters?: string[]
  /** Requesters never served. */
  denyRequesters?: string[]
  /** Most jobs running (or locked) at once, and how many are now. @default unlimited */
  maxConcurrentJobs?: number
  activeJobs?: number
}

export interface Decision {
  accept: boolean
  reasons: string[]
}

const globToRegExp = (g: string) =>
  new RegExp(
    `^${g
      .split('*')
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  )

/** Whether `image` matches one of the `allowedImages` patterns (all images when none are set). */
export function imageAllowed(allowedImages: string[] | undefined, image: string): boolean {
  return (allowedImages ?? ['*']).some((g) => globToRegExp(g).test(image))
}

export function acceptJob(
  c: CapabilityComparison,
  p: Comparator,
  image: string,
  durationSeconds: number,
): Decision {
  const reasons = [...c.reasons]
  if (p.excluded) reasons.push('excluded by the requester')
  if (p.network === true && p.allowNetwork !== true) reasons.push(NETWORK_REFUSED)
  if (p.allowNetwork !== true) for (const m of p.networkMembers ?? []) reasons.push(memberNetworkRefused(m))
  for (const one of [{ image, hasImage: p.hasImage }, ...(p.moreImages ?? [])]) {
    // A runtime's allow-list is its engine's (provider.process.runtimes), not allowedImages.
    const runtime = runtimeOfName(one.image)
    if (runtime !== undefined) {
      if (!one.hasImage) reasons.push(`runtime ${runtime} is not offered here`)
    } else if (!imageAllowed(p.allowedImages, one.image))
      reasons.push(`image ${one.image} is not allowed here`)
    else if (!one.hasImage) reasons.push(`image ${one.image} is not available on this provider`)
  }
  const maxDur = p.maxDurationSeconds ?? 86_400
  if (durationSeconds > maxDur)
    reasons.push(`max duration ${durationSeconds}s exceeds this provider's limit ${maxDur}s`)
  if (p.price > p.maxPrice) reasons.push(`price ${p.price} exceeds the job's max price ${p.maxPrice}`)
  if (p.minPrice !== undefined && p.maxPrice < p.minPrice)
    reasons.push(`below minimum price: the job's max price ${p.maxPrice} is under ${p.minPrice}`)
  if (p.requester !== undefined) {
    if ((p.denyRequesters ?? []).includes(p.requester)) reasons.push('requester denied by this provider')
    else if ((p.allowRequesters ?? []).length > 0 && !(p.allowRequesters ?? []).includes(p.requester))
      reasons.push("requester not in this provider's allow list")
  }
  if (p.maxConcurrentJobs !== undefined && (p.activeJobs ?? 0) >= p.maxConcurrentJobs)
    reasons.push(`busy: ${p.activeJobs ?? 0} of at most ${p.maxConcurrentJobs} concurrent jobs`)
  return { accept: reasons.length === 0, reasons }
}

/**
 * The kind of a decline reason, for counting (`ProviderService.declines`, the
 * `dms_provider_declines_total` metric). Reasons quote the request's image, price and duration;
 * kinds never do, so a peer cannot grow the counters with new names.
 */
const DECLINE_KINDS: Array<[RegExp, string]> = [
  [/^not enough (cpu|memory|disk|gpus):/, 'not enough $1'],
  [/^gpu model:/, 'gpu model'],
  [/^excluded by the requester$/, 'excluded by the requester'],
  [/^network not allowed here:/, 'network not allowed'],
  [/^invalid image:/, 'invalid image'],
  [/^image registry .* is not used by this provider$/, 'registry not used'],
  [/^image .* is not allowed here$/, 'image not allowed'],
  [/^image .* is not available on this provider$/, 'image not available'],
  [/^runtime .* is not offered here$/, 'runtime not offered'],
  [/^max duration /, 'max duration'],
  [/^price /, 'price'],
  [/^below minimum price:/, 'below minimum price'],
  [/^requester denied by this provider$/, 'requester denied'],
  [/^requester not in this provider's allow list$/, 'requester not allowed'],
  [/^busy:/, 'busy'],
  [/^engines? [a-z0-9, -]+ unavailable$/, 'engine unavailable'],
  [/^no engine here runs /, 'no engine'],
  [/^offboarded$/, 'offboarded'],
  [/^(paused|draining|drained|stopping)$/, '$1'],
  [/^requester cap:/, 'requester cap'],
  [/^unpaid jobs:/, 'unpaid jobs'],
  [/^funds:/, 'funds'],
]

export function declineKind(reason: string): string {
  for (const [pattern, kind] of DECLINE_KINDS) {
    const m = pattern.exec(reason)
    if (m !== null) return kind.replace('$1', m[1] ?? '')
  }
  return 'other'
}
