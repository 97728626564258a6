/**
 * One entry of the provider's resource ledger (ledger.ts): its shape, its states, and the checks
 * on what a caller gives for one. Spec: specs/resources.md.
 */
import { InvalidEntryError, InvalidResourcesError, type Committed } from './errors.js'
import { add, normalize, resourcesProblem, sum } from './math.js'
import type { Resources } from './types.js'

export type LedgerEntryState = 'reserved' | 'locked' | 'allocated'

export interface LedgerEntry {
  /** Unique per ledger, chosen by the caller (e.g. the bid or allocation id). */
  id: string
  jobId: string
  resources: Resources
  state: LedgerEntryState
  /** Once allocated: the allocation's id (the one `job status` shows); absent in older records. */
  allocationId?: string
  /**
   * For a reservation: when it lapses (ms epoch). For a lock: the deadline the caller gave, kept
   * for its own timers; the ledger never releases locks by itself (see `overdueLocks`).
   */
  expiresAt?: number
  createdAt: number
  /**
   * A slot for later (ms epoch): the entry holds its resources from then on (ledger-slots.ts).
   * Absent: from its creation. Allocating it earlier moves it to the allocation's time.
   */
  start?: number
  /**
   * The allocation deadline (ms epoch): after it the plan no longer counts the entry at future
   * instants. Absent (entries stored before slots too): it counts until released.
   */
  until?: number
  /**
   * Which of the offer's GPUs it holds (`MachineInfo.gpus[].index`), `resources.gpus` of them;
   * absent without GPUs (and in entries stored before GPUs were named).
   */
  gpuIndices?: number[]
}

/** Where a new entry sits in time (ledger-slots.ts). */
export interface Slot {
  start?: number
  until?: number
}

/**
 * A new entry created at `now`, in `slot` (a start not after now is no slot: it holds at once).
 * @throws InvalidEntryError for a start or until that is no time, or an until not after the start
 */
export function newEntry(
  id: string,
  jobId: string,
  resources: Resources,
  state: LedgerEntryState,
  slot: Slot,
  now: number,
): LedgerEntry {
  if (slot.start !== undefined) checkTime(slot.start, 'start')
  if (slot.until !== undefined) checkTime(slot.until, 'until')
  const from = Math.max(slot.start ?? now, now)
  if (slot.until !== undefined && slot.until <= from)
    throw new InvalidEntryError(`until must be after the start, got ${slot.until} <= ${from}`)
  const e: LedgerEntry = { id, jobId, resources: normalize(resources), state, createdAt: now }
  if (slot.start !== undefined && slot.start > now) e.start = slot.start
  if (slot.until !== undefined) e.until = slot.until
  return e
}

export function isExpired(e: LedgerEntry, now: number): boolean {
  return e.state === 'reserved' && e.expiresAt !== undefined && e.expiresAt <= now
}

export function copy(e: LedgerEntry): LedgerEntry {
  return {
    ...e,
    resources: { ...e.resources },
    ...(e.gpuIndices === undefined ? {} : { gpuIndices: [...e.gpuIndices] }),
  }
}

export function checkId(value: unknown, what: string): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidEntryError(
      `${what} must be a non-empty string, got ${JSON.stringify(value) ?? String(value)}`,
    )
  }
}

export function checkResources(r: unknown, what: string): asserts r is Resources {
  const problem = resourcesProblem(r)
  if (problem !== undefined) throw new InvalidResourcesError(what, problem)
}

export function checkTime(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidEntryError(`${what} must be a time in ms since the epoch, got ${String(value)}`)
  }
}

/** What the live entries (expired reservations left out) hold, by state and in total. */
export function commitmentOf(entries: Iterable<LedgerEntry>, now: number): Committed {
  const live = [...entries].filter((e) => !isExpired(e, now))
  const of = (state: LedgerEntryState) => sum(live.filter((e) => e.state === state).map((e) => e.resources))
  const reserved = of('reserved')
  const locked = of('locked')
  const allocated = of('allocated')
  return { reserved, locked, allocated, total: add(add(reserved, locked), allocated) }
}
