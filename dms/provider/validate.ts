import { inputsProblem } from '../blobs/staging.js'
import { SHA256_HEX } from '../blobs/store.js'
import type { BidRequest, Invocation } from '../protocol/messages.js'
import { needsProblem, needsTotals } from '../workload/needs.js'
import { cpuProblem, inputsSizeProblem } from '../workload/run-rules.js'
import { resourcesProblem } from '../resources/math.js'

const isInt = (v: unknown, min = 0) => typeof v === 'number' && Number.isSafeInteger(v) && v >= min

/**
 * Why a bid request from the network is unusable, or undefined when it is well-formed. Its needs
 * are checked by the workload module's one check (`needsProblem`: bounds, 1..8 members, unique
 * names), then their totals as the ledger will hold them. Images are only bounded here; their
 * grammar is the provider's first check after (`ImageCheck.refusal`), so the requester hears why.
 */
export function checkBidRequest(r: unknown): string | undefined {
  if (typeof r !== 'object' || r === null) return 'not an object'
  const q = r as Partial<BidRequest>
  if (typeof q.jobId !== 'string' || q.jobId.length === 0 || q.jobId.length > 128) return 'jobId'
  const needs = needsProblem(q.workloadNeeds)
  if (needs !== undefined) return `workloadNeeds.${needs.field} ${needs.problem}`
  const total = needsTotals(q.workloadNeeds!)
  // A CPU share below the executor's floor would be reserved as (almost) nothing and run unlimited.
  const bad = resourcesProblem(total) ?? cpuProblem(total.cpu)
  if (bad !== undefined) return `workloadNeeds: the members' resources add up wrong: ${bad}`
  if (!isInt(q.maxDurationSeconds, 1)) return 'maxDurationSeconds'
  if (!isInt(q.maxPrice)) return 'maxPrice'
  if (!isInt(q.deadline)) return 'deadline'
  if (!Array.isArray(q.exclude) || !q.exclude.every((p) => typeof p === 'string')) return 'exclude'
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
