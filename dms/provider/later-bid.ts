/**
 * Bids for a later start (specs/queueing.md, "Later starts"): when a job does not fit now, a
 * provider with `laterBids` on offers the earliest slot of its ledger within `maxStartAheadMs`
 * (ledger-slots.ts) and reserves that slot. Every reservation carries its allocation deadline
 * (`until`), so the slots after it are known.
 */
import type { Clock } from '../../actors/clock.js'
import type { ResourceLedger } from '../resources/ledger.js'
import { StartDeadlinePassedError } from './start-note.js'
import type { Resources } from '../resources/types.js'

/** Room after a run for publishing its result, in the allocation deadline. */
export const PUBLISH_GRACE_MS = 60_000

export interface SlotTiming {
  lockTtlMs: number
  provisionTimeoutMs: number
}

export interface LaterBids {
  /** Bid for a later start when a job does not fit now. @default false */
  enabled: boolean
  /** How far ahead such a start may be. */
  maxStartAheadMs: number
}

/** `provider.maxStartAheadSeconds` when not set (its bound, a day, is in config-schema.ts). */
export const DEFAULT_START_AHEAD_SECONDS = 600

/** The provider's settings as the bid-request handler takes them (defaults in specs/config.md). */
export function slotsOf(init: {
  lockTtlMs?: number
  provisionTimeoutMs: number
  laterBids?: boolean
  maxStartAheadSeconds?: number
}): SlotTiming & { later: LaterBids } {
  return {
    lockTtlMs: init.lockTtlMs ?? 60_000,
    provisionTimeoutMs: init.provisionTimeoutMs,
    later: {
      enabled: init.laterBids ?? false,
      maxStartAheadMs: (init.maxStartAheadSeconds ?? DEFAULT_START_AHEAD_SECONDS) * 1000,
    },
  }
}

/**
 * How long a bid's entry holds from its start: the invocation may come up to `lockTtlMs` after
 * the lock, provisioning takes up to `provisionTimeoutMs`, the run `maxDurationSeconds`, then the
 * result is published.
 */
export function holdMs(maxDurationSeconds: number, t: SlotTiming): number {
  return t.lockTtlMs + t.provisionTimeoutMs + maxDurationSeconds * 1000 + PUBLISH_GRACE_MS
}

/** The later start to bid with, or undefined (it fits now, later bids are off, or no slot). */
export function laterStart(
  ledger: Pick<ResourceLedger, 'slotFor'>,
  held: Resources,
  maxDurationSeconds: number,
  now: number,
  t: SlotTiming & { later?: LaterBids },
): number | undefined {
  if (t.later?.enabled !== true) return undefined
  const start = ledger.slotFor(held, holdMs(maxDurationSeconds, t), t.later.maxStartAheadMs)
  return start !== undefined && start > now ? start : undefined
}

/** What the `slot` actor of a waiting allocation waits for. */
export interface SlotInput {
  bidId: string
  /** The slot's start (the bid's earliestStart): the ledger is asked again then. */
  at: number
  /** The contract's startBy: past it the wait fails (the contract-db expires the contract). */
  startBy?: number
  contractId: string
}

/**
 * Resolves as soon as the ledger lets the entry start (`canStart`): at once, on each release of
 * an entry, or at the slot's start. Rejects with StartDeadlinePassedError at the contract's
 * startBy, or with the signal's reason when aborted.
 */
export function waitForSlot(
  d: { ledger: Pick<ResourceLedger, 'canStart' | 'onFreed'>; clock: Clock },
  input: SlotInput,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const timers: unknown[] = []
    let off = (): unknown => undefined
    const done = (err?: unknown): void => {
      off()
      for (const t of timers) d.clock.clearTimeout(t)
      signal.removeEventListener('abort', aborted)
      if (err === undefined) resolve()
      else reject(err instanceof Error ? err : new Error('the wait for its slot was stopped'))
    }
    const aborted = (): void => done(signal.reason ?? new Error('aborted'))
    const check = (): void => {
      if (d.ledger.canStart(input.bidId)) done()
    }
    if (signal.aborted) return aborted()
    signal.addEventListener('abort', aborted)
    off = d.ledger.onFreed(check)
    const now = d.clock.now()
    if (input.at > now) timers.push(d.clock.setTimeout(check, input.at - now))
    if (input.startBy !== undefined) {
      const by = input.startBy
      timers.push(
        d.clock.setTimeout(
          () => done(new StartDeadlinePassedError(input.contractId, by, 'its slot did not come in time')),
          Math.max(0, by - now),
        ),
      )
    }
    check()
  })
}
