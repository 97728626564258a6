import type { BidRequest } from '../messages.js'
import { resourcesProblem } from '../resources/math.js'

const isInt = (v: unknown, min = 0) => typeof v === 'number' && Number.isSafeInteger(v) && v >= min

/** Why a bid request from the network is unusable, or undefined when it is well-formed. */
export function checkBidRequest(r: unknown): string | undefined {
  if (typeof r !== 'object' || r === null) return 'not an object'
  const q = r as Partial<BidRequest>
  if (typeof q.jobId !== 'string' || q.jobId.length === 0 || q.jobId.length > 128) return 'jobId'
  if (resourcesProblem(q.resources) !== undefined) return 'resources'
  if (typeof q.image !== 'string' || q.image.length === 0 || q.image.length > 512) return 'image'
  if (!isInt(q.maxDurationSeconds, 1)) return 'maxDurationSeconds'
  if (!isInt(q.maxPrice)) return 'maxPrice'
  if (!isInt(q.deadline)) return 'deadline'
  if (!Array.isArray(q.exclude) || !q.exclude.every((p) => typeof p === 'string')) return 'exclude'
  return undefined
}
