/** Time source, injected everywhere so tests can drive it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
  /**
   * Runs `fn` once `ms` have passed on this clock. A clock without timers falls back to the
   * runtime's (`timerOf`). @default globalThis.setTimeout
   */
  setTimeout?(fn: () => void, ms: number): unknown
  /** Cancels a timer made by `setTimeout`. */
  clearTimeout?(handle: unknown): void
}

export const systemClock: Clock = { now: () => Date.now() }

/** The timer functions of a clock: its own, or the runtime's (unref'd, so they never hold the process). */
export function timerOf(clock: Clock): {
  set(fn: () => void, ms: number): unknown
  clear(handle: unknown): void
} {
  if (clock.setTimeout !== undefined && clock.clearTimeout !== undefined) {
    const set = clock.setTimeout.bind(clock)
    const clear = clock.clearTimeout.bind(clock)
    return { set, clear }
  }
  return {
    set: (fn, ms) => setTimeout(fn, Math.max(0, ms)).unref(),
    clear: (h) => clearTimeout(h as NodeJS.Timeout),
  }
}

/**
 * A clock that moves only when told (`advance`), firing its timers in time order: unit tests
 * drive time-based behaviour with it instead of waiting.
 */
export class ManualClock implements Clock {
  private timers: Array<{ at: number; fn: () => void; id: number }> = []
  private nextId = 1

  constructor(private t = 1_700_000_000_000) {}

  now(): number {
    return this.t
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++
    this.timers.push({ at: this.t + Math.max(0, ms), fn, id })
    return id
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== handle)
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.timers.length
  }

  /** Moves time forward by `ms`, firing each timer that falls due, in order, at its own time. */
  advance(ms: number): void {
    const end = this.t + ms
    for (;;) {
      const due = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0]
      if (due === undefined) break
      this.timers = this.timers.filter((x) => x !== due)
      this.t = Math.max(this.t, due.at)
      due.fn()
    }
    this.t = end
  }
}

/** Timer source, injected where a deadline must be driven by tests (e.g. a frame read deadline). */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

export const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
}
