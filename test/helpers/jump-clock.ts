/**
 * A clock for tests of whole nodes: real time and real timers, plus `jump(ms)`, which moves the
 * time forward at once and runs every timer that falls due on the way (in time order). Lets a
 * test reach a deadline minutes away while the network keeps running in real time.
 */
import type { Clock } from '../../actors/clock.js'

interface Timer {
  at: number
  fn: () => void
  handle: NodeJS.Timeout
}

export class JumpClock implements Clock {
  private offset = 0
  private nextId = 1
  private readonly timers = new Map<number, Timer>()

  now(): number {
    return Date.now() + this.offset
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++
    const wait = Math.max(0, ms)
    const handle = setTimeout(() => {
      this.timers.delete(id)
      fn()
    }, wait).unref()
    this.timers.set(id, { at: this.now() + wait, fn, handle })
    return id
  }

  clearTimeout(id: unknown): void {
    const t = this.timers.get(id as number)
    if (t === undefined) return
    clearTimeout(t.handle)
    this.timers.delete(id as number)
  }

  /** Moves the time forward by `ms`; every timer due by then runs now. */
  jump(ms: number): void {
    this.offset += ms
    const due = [...this.timers].filter(([, t]) => t.at <= this.now()).sort(([, a], [, b]) => a.at - b.at)
    for (const [id, t] of due) {
      if (!this.timers.has(id)) continue
      this.clearTimeout(id)
      t.fn()
    }
  }
}
