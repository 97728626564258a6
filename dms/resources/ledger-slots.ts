/**
 * Time slots of the provider's ledger (ledger.ts): when each entry holds its resources, and where a
 * new one fits. Pure functions over the live entries. Spec: specs/resources.md ("Slots").
 *
 * An entry holds its resources from its `start` (absent: from its creation, i.e. at once) until its
 * `until` (absent: until released). The plan at an instant t is the sum of the entries that hold
 * then:
 *
 * - at the present instant, every entry whose start has come counts, also one past its `until`
 *   that is not released yet (a run overrunning its deadline still holds its resources);
 * - at a future instant, an entry counts from its start until its `until`.
 *
 * The plan is a step function that only rises at an entry's start, so a new entry fits if it fits
 * at its own start and at every other entry's start (and `until`) before its own `until`: the
 * instants of interest. Starting an entry early (before its slot) is checked the same way, with its
 * start moved to now, and also against what is allocated now: an overrunning run may hold what
 * the plan gave to the next slot, which then waits (`canStart`).
 */
import { InsufficientResourcesError } from './errors.js'
import type { LedgerEntry } from './ledger-entry.js'
import { add, fits, floorZero, sub, sum } from './math.js'
import type { Resources } from './types.js'

/** When an entry starts holding its resources (-Infinity: from its creation, before now). */
export function startOf(e: LedgerEntry): number {
  return e.start ?? -Infinity
}

export function untilOf(e: LedgerEntry): number {
  return e.until ?? Infinity
}

/** What the entries hold at instant `t` (see the file's comment for the present instant). */
export function planAt(entries: readonly LedgerEntry[], t: number, now: number): Resources {
  return sum(entries.filter((e) => startOf(e) <= t && (t <= now || untilOf(e) > t)).map((e) => e.resources))
}

/** The instants at which a candidate held over [start, until) must be checked, ascending. */
export function instantsOfInterest(entries: readonly LedgerEntry[], start: number, until: number): number[] {
  const points = new Set<number>([start])
  for (const e of entries) {
    for (const t of [startOf(e), untilOf(e)]) if (t > start && t < until) points.add(t)
  }
  return [...points].sort((a, b) => a - b)
}

/** A candidate entry: its resources held over [start, until). */
export interface Candidate {
  resources: Resources
  start: number
  until: number
}

/**
 * The first instant of interest at which `c` does not fit next to `others` under `offer`, with what
 * was free there; undefined if it fits everywhere.
 */
export function misfit(
  others: readonly LedgerEntry[],
  offer: Resources,
  c: Candidate,
  now: number,
): { at: number; free: Resources } | undefined {
  for (const t of instantsOfInterest(others, Math.max(c.start, now), c.until)) {
    const free = floorZero(sub(offer, planAt(others, t, now)))
    if (!fits(c.resources, free)) return { at: t, free }
  }
  return undefined
}

/** The sum of the allocated entries (what runs now). */
export function allocatedNow(entries: readonly LedgerEntry[]): Resources {
  return sum(entries.filter((e) => e.state === 'allocated').map((e) => e.resources))
}

/**
 * Whether entry `e` may be allocated now: it fits next to what is allocated now (an entry whose
 * slot has come but that waits does not count: first allocated, first served) and, with its start
 * moved to now, in the plan of the others at every later instant of interest.
 */
export function startsNow(
  entries: readonly LedgerEntry[],
  e: LedgerEntry,
  offer: Resources,
  now: number,
): boolean {
  const others = entries.filter((o) => o.id !== e.id)
  if (!fits(add(allocatedNow(others), e.resources), offer)) return false
  // After now: the plan of the others (from the next millisecond on) leaves room for `e`.
  const until = untilOf(e)
  if (until <= now + 1) return true
  return misfit(others, offer, { resources: e.resources, start: now + 1, until }, now) === undefined
}

/**
 * The earliest start within [now, now + maxAheadMs] at which `resources`, held for `durationMs`,
 * fit next to `entries`: now, or one of the instants where an entry stops holding. Undefined if none.
 */
export function earliestSlot(
  entries: readonly LedgerEntry[],
  offer: Resources,
  now: number,
  want: { resources: Resources; durationMs: number; maxAheadMs: number },
): number | undefined {
  const { resources, durationMs, maxAheadMs } = want
  const latest = now + maxAheadMs
  const candidates = [now, ...entries.map(untilOf).filter((t) => t > now && t <= latest)]
  for (const start of [...new Set(candidates)].sort((a, b) => a - b)) {
    if (misfit(entries, offer, { resources, start, until: start + durationMs }, now) === undefined)
      return start
  }
  return undefined
}

/** Throws InsufficientResourcesError (with what was free where it did not fit) unless new `e` fits. */
export function checkFits(live: readonly LedgerEntry[], e: LedgerEntry, offer: Resources, now: number): void {
  const others = live.filter((o) => o.id !== e.id)
  const bad = misfit(others, offer, { resources: e.resources, start: e.start ?? now, until: untilOf(e) }, now)
  if (bad !== undefined) throw new InsufficientResourcesError(e.resources, bad.free)
}

/** Throws InsufficientResourcesError (with what is free of the allocations now) unless `e` starts now. */
export function checkStartsNow(
  live: readonly LedgerEntry[],
  e: LedgerEntry,
  offer: Resources,
  now: number,
): void {
  if (startsNow(live, e, offer, now)) return
  const others = live.filter((o) => o.id !== e.id)
  throw new InsufficientResourcesError(e.resources, floorZero(sub(offer, allocatedNow(others))))
}

/** Whether `offer` covers the plan at the present and every later instant of interest, and what runs. */
export function offerHolds(live: readonly LedgerEntry[], offer: Resources, now: number): boolean {
  if (!fits(allocatedNow(live), offer)) return false
  return instantsOfInterest(live, now, Infinity).every((t) => fits(planAt(live, t, now), offer))
}
