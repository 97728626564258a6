/**
 * How late a job may start: its spec's `startBy` (an ISO time, or a duration counted from the
 * job's start: `startAt`, else the time it was posted), else its queue deadline when it may wait
 * in `queued`, else now. A bid whose `earliestStart` is later than that (beyond START_SLACK_MS for
 * clock skew between peers) is declined by the requester with a reason and released at once.
 * Spec: specs/job-spec.md (`startBy`), specs/queueing.md ("Later starts").
 */
import type { Bid } from '../contracts/model.js'
import { queueDeadlineOf } from './job-rules.js'
import type { JobRecord } from './job-record.js'

export { parseStartBy, type StartBy } from './start-by.js'

/**
 * A later start than the latest one by at most this is not counted: clock skew between peers, the
 * same allowance as the envelopes' (actors/system.ts) and approvals'.
 */
export const START_SLACK_MS = 30_000
/**
 * The latest start the job accepts (ms since the epoch), or undefined for "now" (a job that may
 * not wait and gave no `startBy`).
 */
export function latestStartOf(job: JobRecord): number | undefined {
  const by = job.spec.startBy
  if (by !== undefined)
    return 'at' in by ? by.at : (job.spec.startAt ?? job.createdAt) + by.withinSeconds * 1000
  if ((job.spec.queueTimeoutSeconds ?? 0) > 0) return queueDeadlineOf(job)
  return undefined
}

/** The largest time a Date holds, ms either side of the epoch. */
const MAX_DATE_MS = 8.64e15

/** Whether `t` is a time: whole milliseconds a Date can hold (a peer's `earliestStart`). */
export const isTime = (t: number): boolean => Number.isSafeInteger(t) && Math.abs(t) <= MAX_DATE_MS

/** Why `bid` starts too late for a job whose latest start is `latest` (at `now`), or undefined. */
export function startTooLate(
  bid: Pick<Bid, 'earliestStart'>,
  latest: number | undefined,
  now: number,
): string | undefined {
  const limit = latest ?? now
  if (bid.earliestStart <= limit + START_SLACK_MS) return undefined
  const iso = (t: number) => (isTime(t) ? new Date(t).toISOString() : String(t))
  return latest === undefined
    ? `starts at ${iso(bid.earliestStart)}, later than now: the job may not wait (give it a startBy or a queueTimeout)`
    : `starts at ${iso(bid.earliestStart)}, after the job's latest start ${iso(latest)} (startBy)`
}
