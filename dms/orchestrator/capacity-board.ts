/**
 * The requester's queued jobs waiting for capacity news, oldest first, and the news itself as it
 * arrives (capacity-news.ts): an announcement wakes the oldest waiting jobs whose resources fit in
 * what the provider says is free, together no more than that, so one freed slot wakes one job, not
 * the whole queue. Spec: specs/protocol.md ("Capacity news").
 */
import { fits, sub } from '../resources/math.js'
import type { Resources } from '../resources/types.js'
import type { CapacityWaits } from './steps/deps.js'

interface Waiter {
  resources: Resources
  wake: (by: string) => void
}

export class CapacityBoard implements CapacityWaits {
  /** Insertion order is the wait order (a Map keeps it). */
  private readonly waiters = new Map<string, Waiter>()
  /** Jobs woken by news (for /v1/info and tests; `wakeOldest` does not count here). */
  woken = 0

  wait(jobId: string, resources: Resources, signal: AbortSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error)
      const onAbort = () => {
        if (this.waiters.get(jobId) === waiter) this.waiters.delete(jobId)
        reject(signal.reason as Error)
      }
      const waiter: Waiter = {
        resources,
        wake: (by) => {
          signal.removeEventListener('abort', onAbort)
          resolve(by)
        },
      }
      this.waiters.delete(jobId) // a job waits once; a new wait goes to the back
      this.waiters.set(jobId, waiter)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  /** Jobs waiting now. */
  get size(): number {
    return this.waiters.size
  }

  /**
   * Wakes the `max` oldest waiting jobs, whatever their resources (a provider joined: what it has
   * free is not known yet). Returns how many.
   */
  wakeOldest(max: number, by: string): number {
    const woken = [...this.waiters].slice(0, Math.max(0, max))
    for (const [jobId] of woken) this.waiters.delete(jobId)
    for (const [, w] of woken) w.wake(by)
    return woken.length
  }

  /** `peer` has `free` now: wakes the oldest jobs that fit in it, together. Returns how many. */
  announce(peer: string, free: Resources): number {
    let room = free
    const woken: Waiter[] = []
    for (const [jobId, w] of this.waiters) {
      // A job that gives no disk gets the provider's default quota: disk is not compared then.
      const need = w.resources.diskBytes === 0 ? { ...w.resources, diskBytes: room.diskBytes } : w.resources
      if (!fits(need, room)) continue
      room = sub(room, need)
      this.waiters.delete(jobId)
      woken.push(w)
    }
    this.woken += woken.length
    for (const w of woken) w.wake(`capacity ${peer}`)
    return woken.length
  }
}
