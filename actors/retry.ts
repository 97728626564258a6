/**
 * One retry loop: tries `fn` up to `attempts` times, waiting `backoffMs(n)` on the injected clock
 * after the n-th failure, while `retryIf` says the failure is worth another try.
 */
import { delay, type Clock } from './clock.js'

export interface RetryOptions {
  /** Tries in all, the first included (1 = no retry). */
  attempts: number
  /** The wait after the `failed`-th failure (1, 2, ...) before the next try. @default no wait */
  backoffMs?: (failed: number) => number
  /** Whether this failure is worth another try. @default every failure */
  retryIf?: (err: unknown, failed: number) => boolean
  /** Called before each wait (e.g. to log it). */
  onRetry?: (err: unknown, failed: number, waitMs: number) => void
  clock: Clock
  /** Aborts the waits (rejecting with its reason); `fn` gets it to abort its own work. */
  signal?: AbortSignal
}

/** `base`, `2 × base`, `4 × base`... capped at `maxMs`: a backoff for `RetryOptions.backoffMs`. */
export const exponential =
  (baseMs: number, maxMs = Infinity) =>
  (failed: number): number =>
    Math.min(maxMs, baseMs * 2 ** (failed - 1))

/**
 * Resolves with `fn`'s first success; rejects with its last failure once the attempts are spent
 * or `retryIf` refuses, or with the signal's reason if it aborts while waiting.
 */
export async function retry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt)
    } catch (err) {
      if (attempt >= opts.attempts || (opts.retryIf !== undefined && !opts.retryIf(err, attempt))) throw err
      const wait = opts.backoffMs?.(attempt) ?? 0
      opts.onRetry?.(err, attempt, wait)
      if (wait > 0) await delay(wait, { clock: opts.clock, signal: opts.signal })
      else opts.signal?.throwIfAborted()
    }
  }
}
