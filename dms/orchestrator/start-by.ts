/**
 * A job spec's `startBy` as written: an ISO 8601 time with a zone, or a duration after the job's
 * start (start-window.ts says what it means for bids). Spec: specs/job-spec.md.
 */

/** Longest `startBy` as a duration (7 days, as `queueTimeout`). */
export const MAX_START_WITHIN_SECONDS = 604_800

/** A parsed `startBy`: an absolute time, or seconds after the job's start. */
export type StartBy = { at: number } | { withinSeconds: number }

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/
const DURATION = /^(?:(\d{1,6})h)?(?:(\d{1,6})m)?(?:(\d{1,9})s?)?$/

/** `startBy` as written in a spec, or the reason it is refused. */
export function parseStartBy(text: string): StartBy | string {
  if (ISO_TIME.test(text)) {
    const at = Date.parse(text)
    return Number.isFinite(at) ? { at } : 'is not a valid time'
  }
  const m = DURATION.exec(text)
  if (text === '' || m === null)
    return 'must be an ISO 8601 time with a zone (2026-11-22T18:00:00Z) or a duration (600, 90s, 10m, 2h, 1h30m)'
  const seconds = Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)
  if (seconds > MAX_START_WITHIN_SECONDS) return 'must be at most 7 days after the job starts'
  return { withinSeconds: seconds }
}
