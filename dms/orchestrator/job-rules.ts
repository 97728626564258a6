/**
 * The job machine's rules for waiting and retrying, as pure functions of the job record: when a
 * scheduled job starts, a queued job's deadline and the declines it keeps, and whether the retry
 * policy takes an outcome. Spec: specs/state-machines.md, specs/queueing.md, specs/job-spec.md.
 */
import type { Decline } from '../protocol/messages.js'
import type { JobError, JobRecord } from './job-record.js'

/** A job whose `startAt` is later than `now` waits in `scheduled`. */
export const startsLater = (job: JobRecord, now: number): boolean =>
  job.spec.startAt !== undefined && job.spec.startAt > now

/** Declines kept in `queue.declines` (one per provider, the latest). */
export const QUEUE_DECLINES_KEPT = 64

/**
 * When a queued job fails QUEUE_TIMEOUT: its start (`startAt`, else when it was posted) plus its
 * queueTimeout; kept once computed.
 */
export const queueDeadlineOf = (job: JobRecord): number =>
  job.queue?.deadline ?? (job.spec.startAt ?? job.createdAt) + (job.spec.queueTimeoutSeconds ?? 0) * 1000

/** The declines of every queued round and of the last one, one per provider (the latest). */
export function queueDeclinesOf(job: JobRecord): Decline[] {
  const latest = new Map((job.queue?.declines ?? []).map((d) => [d.provider, d]))
  for (const d of job.declines) latest.set(d.provider, d)
  return [...latest.values()].slice(-QUEUE_DECLINES_KEPT)
}

/** QUEUE_TIMEOUT: the job waited its queueTimeout and no provider had room; every reason given. */
export function queueTimeoutError(job: JobRecord): JobError {
  const declines = queueDeclinesOf(job)
  const told = declines.map((d) => `${d.provider.slice(-8)}: ${d.reasons.join('; ')}`).join(' | ')
  return {
    code: 'QUEUE_TIMEOUT',
    message:
      `no provider had room within the queue timeout (${job.spec.queueTimeoutSeconds ?? 0} s, ` +
      `${job.queue?.rounds ?? 0} bid rounds)` +
      (told.length > 0 ? `: ${told}` : ': no provider answered'),
    declines,
  }
}

/** What a new attempt starts without: the last attempt's bids, contract and run. */
export const fresh: Partial<JobRecord> = {
  bids: [],
  declines: [],
  tried: [],
  refusals: [],
  winner: undefined,
  contract: undefined,
  proof: undefined,
  allocationId: undefined,
  updates: [],
  result: undefined,
  verification: undefined,
  lastSeenAt: undefined,
  settlement: undefined,
  error: undefined,
}

/** Which retry policy kind an outcome is (specs/job-spec.md, "Retry policy"). */
export const outcomeKind = (error: JobError | undefined) =>
  error?.code === 'RUN_FAILED' ? 'runFailed' : error?.code === 'RUN_TIMED_OUT' ? 'timedOut' : undefined

export const policyAllows = (
  job: JobRecord,
  kind: 'providerFault' | 'runFailed' | 'timedOut' | undefined,
) => {
  const p = job.spec.retryPolicy
  return (
    p !== undefined &&
    kind !== undefined &&
    p.on.includes(kind) &&
    (job.attempts?.length ?? 0) < p.attempts &&
    job.cancelRequestedAt === undefined
  )
}

/**
 * Contract refusals that say the contract came too late, not that it was wrong: its startBy or its
 * terms' expiry passed before the contract-db saw it (the contract-db was restarting, or busy).
 * Nothing was locked; a queued job bids again with fresh terms instead of failing.
 */
const LATE_REFUSALS: ReadonlySet<string> = new Set(['START_DEADLINE_PASSED', 'CONTRACT_EXPIRED'])

/** Whether a job that found no usable bid may wait in `queued` for the next round. */
export const mayQueue = (job: JobRecord, now: number): boolean =>
  (job.spec.queueTimeoutSeconds ?? 0) > 0 &&
  // A refused contract is not a matter of capacity (it fails as before), unless it came too late.
  !(job.refusals ?? []).some((r) => r.step === 'contract' && !LATE_REFUSALS.has(r.code)) &&
  now < queueDeadlineOf(job)

/** Why a job found no usable bid: QUEUE_TIMEOUT after queueing, else NO_BIDS, CONTRACT_REFUSED or NO_PROVIDER_ACCEPTED. */
export function noBidsError(context: JobRecord): JobError {
  // A job that waited in `queued` and whose last round, at its deadline, found nothing.
  if (context.queue !== undefined && (context.spec.queueTimeoutSeconds ?? 0) > 0)
    return queueTimeoutError(context)
  const refusals = context.refusals ?? []
  const contracting = refusals.some((r) => r.step === 'contract')
  const told = refusals.map((r) => `${r.provider.slice(-8)}: ${r.code}: ${r.message}`).join(' | ')
  return {
    code: context.bids.length === 0 ? 'NO_BIDS' : contracting ? 'CONTRACT_REFUSED' : 'NO_PROVIDER_ACCEPTED',
    message:
      context.bids.length === 0
        ? context.declines.length === 0
          ? `no provider answered the bid request (${context.providersConnected ?? 0} providers connected)`
          : `no provider bid: ${context.declines.map((d) => `${d.provider.slice(-8)}: ${d.reasons.join('; ')}`).join(' | ')}${queueHint(context)}`
        : contracting
          ? `no bid could be contracted: ${told}`
          : 'every bidding provider declined the job request',
    declines: context.declines,
  }
}

/**
 * When every provider declined only for room (`not enough …`, capability.ts and the ledger's
 * InsufficientResourcesError) and the job would not wait: how to wait. A devnet's third concurrent
 * job failed at once without a word of --queue-timeout (issue 35).
 */
function queueHint(job: JobRecord): string {
  if ((job.spec.queueTimeoutSeconds ?? 0) > 0) return ''
  const roomOnly = job.declines.every(
    (d) => d.reasons.length > 0 && d.reasons.every((r) => r.startsWith('not enough ')),
  )
  return roomOnly
    ? ' (if the providers are busy rather than too small, post the job with --queue-timeout 10m, or queueTimeout in the spec, to wait in `queued` for room)'
    : ''
}
