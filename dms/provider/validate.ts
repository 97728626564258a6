import { inputsProblem } from '../blobs/staging.js'
import { SHA256_HEX } from '../blobs/store.js'
import type { BidRequest, Invocation } from '../protocol/messages.js'
import { IMAGE_REF_MAX_LENGTH } from '../protocol/image-ref.js'
import { commandProblem, cpuProblem, envProblem, inputsSizeProblem } from '../protocol/run-rules.js'
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
  return undefined
}

/**
 * Why an invocation's command, environment or inputs cannot be run (the executor's own rules), or
 * undefined. Checked before anything is allocated for it.
 */
export function invocationProblem(inv: Invocation, diskBytes: number): string | undefined {
  if (!Array.isArray(inv.command)) return 'command must be a non-empty list of strings'
  const cmd = commandProblem(inv.command)
  if (cmd !== undefined) return `command[${cmd.index}] ${cmd.problem}`
  const env: unknown = inv.env ?? {}
  if (typeof env !== 'object' || env === null || Array.isArray(env)) return 'env must be an object of strings'
  const bad = envProblem(env as Record<string, unknown>)
  if (bad !== undefined) return `env ${JSON.stringify(bad.name.slice(0, 64))} ${bad.problem}`
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
