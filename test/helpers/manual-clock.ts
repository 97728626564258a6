import type { Clock, Timers } from '../../actors/clock.js'

interface Pending {
  at: number
  ms: number
  fn: () => void
}

/**
 * A simulated clock with timers: time moves only through `advance`, which runs the timers that
 * fall due, in order. `scheduled` lets a test wait for a timer to be armed (no polling).
 */
export class ManualClock implements Clock, Timers {
  private readonly pending = new Set<Pending>()
  private readonly armListeners = new Set<(p: { ms: number }) => void>()

  constructor(public t = 1_000_000) {}

  now(): number {
    return this.t
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const p: Pending = { at: this.t + Math.max(0, ms), ms, fn }
    this.pending.add(p)
    for (const l of this.armListeners) l(p)
    return p
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as Pending)
  }

  /** Timers armed and not yet run or cleared. */
  get timers(): number {
    return this.pending.size
  }

  /** Moves time forward by `ms`, running each timer that falls due (earliest first). */
  advance(ms: number): void {
    const until = this.t + ms
    for (;;) {
      const next = [...this.pending].sort((a, b) => a.at - b.at)[0]
      if (next === undefined || next.at > until) break
      this.pending.delete(next)
      this.t = Math.max(this.t, next.at)
      next.fn()
    }
    this.t = until
  }

  /** Resolves when a timer of `ms` is armed (now, if one is pending already). */
  scheduled(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if ([...this.pending].some((p) => p.ms === ms)) return resolve()
      const l = (p: { ms: number }) => {
        if (p.ms !== ms) return
        this.armListeners.delete(l)
        resolve()
      }
      this.armListeners.add(l)
    })
  }
}
