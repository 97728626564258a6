import { inputsProblem } from '../blobs/staging.js'
import { SHA256_HEX } from '../blobs/store.js'
import type { BidMember, BidRequest, Invocation } from '../protocol/messages.js'
import { IMAGE_REF_MAX_LENGTH } from '../workload/image-ref.js'
import {
  cpuProblem,
  inputsSizeProblem,
  MAX_POD_MEMBERS,
  MIN_POD_MEMBERS,
  POD_MEMBER_NAME,
} from '../workload/run-rules.js'
import { resourcesProblem } from '../resources/math.js'

const isInt = (v: unknown, min = 0) => typeof v === 'number' && Number.isSafeInteger(v) && v >= min

/**
 * Why a bid request from the network is unusable, or undefined when it is well-formed. The image is
 * only bounded here; its grammar is the provider's first check after (`ImageCheck.refusal`), so the
 * requester hears why.
 */
export function checkBidRequest(r: unknown): string | undefined {
  if (typeof r !== 'object' || r === null) return 'not an object'
  const q = r as Partial<BidRequest>
  if (typeof q.jobId !== 'string' || q.jobId.length === 0 || q.jobId.length > 128) return 'jobId'
  // A CPU share below the executor's floor would be reserved as (almost) nothing and run unlimited.
  if (resourcesProblem(q.resources) !== undefined || cpuProblem(q.resources?.cpu) !== undefined)
    return 'resources'
  if (typeof q.image !== 'string' || q.image.length === 0 || q.image.length > IMAGE_REF_MAX_LENGTH)
    return 'image'
  if (!isInt(q.maxDurationSeconds, 1)) return 'maxDurationSeconds'
  if (!isInt(q.maxPrice)) return 'maxPrice'
  if (!isInt(q.deadline)) return 'deadline'
  if (!Array.isArray(q.exclude) || !q.exclude.every((p) => typeof p === 'string')) return 'exclude'
  if (q.members !== undefined) return podRequestProblem(q as BidRequest)
  return undefined
}

/**
 * Why a pod's bid request is unusable: 2..8 members, named by the task-name grammar, each once,
 * with a bounded image; the first member's image is the request's (the contract's terms name it),
 * and the pod as a whole asks for no network (each member says for itself).
 */
function podRequestProblem(q: BidRequest): string | undefined {
  const members: unknown = q.members
  if (!Array.isArray(members) || members.length < MIN_POD_MEMBERS || members.length > MAX_POD_MEMBERS)
    return 'members'
  const names = new Set<string>()
  for (const [i, m] of (members as BidMember[]).entries()) {
    if (typeof m !== 'object' || m === null) return `members[${i}]`
    if (typeof m.name !== 'string' || !POD_MEMBER_NAME.test(m.name) || names.has(m.name))
      return `members[${i}].name`
    names.add(m.name)
    if (typeof m.image !== 'string' || m.image.length === 0 || m.image.length > IMAGE_REF_MAX_LENGTH)
      return `members[${i}].image`
    if (m.network !== undefined && typeof m.network !== 'boolean') return `members[${i}].network`
  }
  if ((members as BidMember[])[0].image !== q.image) return 'image'
  if (q.network !== undefined) return 'network'
  return undefined
}

/**
 * Why an invocation's inputs cannot be staged, or undefined (its workload: invoked-workload.ts).
 * Checked before anything is allocated for it.
 */
export function invocationProblem(inv: Invocation, diskBytes: number): string | undefined {
  const inputs = inv.inputs ?? []
  if (!Array.isArray(inputs)) return 'inputs must be a list'
  const notBlob = inputs.findIndex(
    (f) =>
      typeof f !== 'object' ||
      f === null ||
      typeof f.path !== 'string' ||
      typeof f.sha256 !== 'string' ||
      !SHA256_HEX.test(f.sha256) ||
      !Number.isSafeInteger(f.size) ||
      f.size < 0,
  )
  if (notBlob >= 0) return `inputs[${notBlob}] needs a sha256 blob id and a size`
  return (
    inputsProblem(inputs) ??
    inputsSizeProblem(
      inputs.map((f) => f.size),
      diskBytes,
    )
  )
}
