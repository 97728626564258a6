/**
 * Time, injected everywhere a part reads the time or waits, so tests drive it (`ManualClock`)
 * instead of waiting. The shape is xstate's `Clock` (setTimeout/clearTimeout) plus `now`: pass
 * the same clock to `createActor(machine, { clock })` and a machine's `after` delays follow it.
 */
import { DmsError } from './errors.js'

/** A time source with timers. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
  /** Runs `fn` once `ms` have passed on this clock; returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): unknown
  /** Cancels a timer made by `setTimeout` (a handle already fired or cleared is ignored). */
  clearTimeout(handle: unknown): void
}

/**
 * The runtime's time and timers. A timer never holds the process open by itself (unref'd):
 * whoever waits on one also holds a socket, a server or a child process, and every part clears
 * its timers when it stops.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

/** Why a `timeoutSignal` aborted: the wait ran out. */
export class TimeoutError extends DmsError {
  constructor(ms: number) {
    super('TIMEOUT', `timed out after ${ms} ms`)
  }
}

const reasonOf = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new Error('aborted', { cause: signal.reason })

/**
 * Resolves after `ms` on `clock`; rejects with the signal's reason as soon as `signal` aborts
 * (at once if it already has), and the timer is cleared.
 */
export function delay(ms: number, opts: { clock: Clock; signal?: AbortSignal }): Promise<void> {
  const { clock, signal } = opts
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) return reject(reasonOf(signal))
    const onAbort = () => {
      clock.clearTimeout(timer)
      reject(reasonOf(signal!))
    }
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * A signal that aborts with a TimeoutError after `ms` on `clock`, or with `signal`'s reason when
 * that aborts first (the clock's AbortSignal.timeout + AbortSignal.any).
 */
export function timeoutSignal(ms: number, opts: { clock: Clock; signal?: AbortSignal }): AbortSignal {
  const { clock, signal } = opts
  const ac = new AbortController()
  if (signal?.aborted === true) {
    ac.abort(signal.reason)
    return ac.signal
  }
  const onAbort = () => {
    clock.clearTimeout(timer)
    ac.abort(signal!.reason)
  }
  const timer = clock.setTimeout(() => {
    signal?.removeEventListener('abort', onAbort)
    ac.abort(new TimeoutError(ms))
  }, ms)
  signal?.addEventListener('abort', onAbort, { once: true })
  return ac.signal
}

/**
 * Calls `fn` every `ms` on `clock` (the first call `ms` from now) until the returned function is
 * called. A call that throws is ignored (`fn` handles its own errors); the next one still comes.
 */
export function every(clock: Clock, ms: number, fn: () => void): () => void {
  let stopped = false
  let timer: unknown
  const tick = () => {
    if (stopped) return
    timer = clock.setTimeout(tick, ms)
    try {
      fn()
    } catch {
      /* fn's own business */
    }
  }
  timer = clock.setTimeout(tick, ms)
  return () => {
    stopped = true
    clock.clearTimeout(timer)
  }
}

interface Timer {
  at: number
  id: number
  ms: number
  fn: () => void
}

/** One turn of the event loop: every promise continuation queued so far has run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * A simulated clock for tests: time moves only through `advance` / `advanceAsync`, which run the
 * timers that fall due in time order (ties in the order they were armed), each at its own time.
 */
export class ManualClock implements Clock {
  private timers: Timer[] = []
  private nextId = 1
  private readonly armListeners = new Set<(t: Timer) => void>()

  constructor(private t = 1_700_000_000_000) {}

  now(): number {
    return this.t
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const timer: Timer = { at: this.t + Math.max(0, ms), id: this.nextId++, ms, fn }
    this.timers.push(timer)
    for (const l of [...this.armListeners]) l(timer)
    return timer.id
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== handle)
  }

  /** Timers armed and not yet run or cleared. */
  get pending(): number {
    return this.timers.length
  }

  /** When the next timer falls due, or undefined when none is armed. */
  nextAt(): number | undefined {
    return this.due(Infinity)?.at
  }

  private due(until: number): Timer | undefined {
    let best: Timer | undefined
    for (const x of this.timers)
      if (x.at <= until && (best === undefined || x.at < best.at || (x.at === best.at && x.id < best.id)))
        best = x
    return best
  }

  private fire(timer: Timer): void {
    this.timers = this.timers.filter((x) => x !== timer)
    this.t = Math.max(this.t, timer.at)
    timer.fn()
  }

  /**
   * Moves time forward by `ms`, running each timer that falls due on the way (also timers armed
   * by those), synchronously. Code that awaits between timers needs `advanceAsync`.
   */
  advance(ms: number): void {
    const end = this.t + ms
    for (let next = this.due(end); next !== undefined; next = this.due(end)) this.fire(next)
    this.t = end
  }

  /**
   * Like `advance`, but lets promise continuations run (one event-loop turn) before the first
   * timer, between timers and at the end, so code that awaits a timer and then arms the next one
   * (a retry's backoff, a heartbeat loop) is driven through. I/O still has to be awaited.
   */
  async advanceAsync(ms: number): Promise<void> {
    const end = this.t + ms
    await turn()
    for (let next = this.due(end); next !== undefined; next = this.due(end)) {
      this.fire(next)
      await turn()
    }
    this.t = end
    await turn()
  }

  /** Resolves when a timer of `ms` is armed (at once if one is armed already). */
  scheduled(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.timers.some((x) => x.ms === ms)) return resolve()
      const l = (x: Timer) => {
        if (x.ms !== ms) return
        this.armListeners.delete(l)
        resolve()
      }
      this.armListeners.add(l)
    })
  }
}
