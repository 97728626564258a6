/**
 * The requester's queued jobs waiting for capacity news, oldest first, and what wakes them: an
 * announcement (capacity-news.ts) wakes the oldest waiting jobs whose resources fit in what the
 * provider says is free, together no more than that, so one freed slot wakes one job, not the
 * whole queue; a join (provider-joins.ts) wakes the oldest. Either only for a peer known as an
 * approved provider, and no more jobs than its credit (wakers.ts): a provider that announces room
 * and never bids soon wakes nothing, and the same announcement twice wakes nothing the second
 * time. Spec: specs/queueing.md ("Capacity news").
 */
import { fits, sub } from '../resources/math.js'
import type { Resources } from '../resources/types.js'
import type { CapacityWaits } from './steps/deps.js'
import type { Wakers } from './wakers.js'

interface Waiter {
  resources: Resources
  wake: (by: string) => void
}

/** Why an approved provider's announcement or join woke nothing though jobs were waiting. */
export type Unheeded = 'repeated' | 'no_credit'

export class CapacityBoard implements CapacityWaits {
  /** Insertion order is the wait order (a Map keeps it). */
  private readonly waiters = new Map<string, Waiter>()
  /** Jobs woken by news (for /v1/info and tests; `joined` does not count here). */
  woken = 0
  /** Announcements and joins that woke nothing while jobs waited, by reason. */
  readonly unheeded: Partial<Record<Unheeded, number>> = {}

  constructor(readonly wakers: Wakers) {}

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
   * `peer`, an approved provider, joined: wakes the oldest waiting jobs, whatever their resources
   * (what it has free is not known), at most `max` and its credit. Returns how many.
   */
  joined(peer: string, max: number): number {
    const allowed = Math.min(max, this.allowance(peer))
    const woken = [...this.waiters].slice(0, Math.max(0, allowed))
    for (const [jobId] of woken) this.waiters.delete(jobId)
    this.wakers.spend(peer, woken.length)
    for (const [, w] of woken) w.wake(`joined ${peer}`)
    return woken.length
  }

  /**
   * `peer` (its provider credential good until `until`) has `free` now: wakes the oldest jobs that
   * fit in it, together, at most its credit. Returns how many.
   */
  announce(peer: string, free: Resources, until: number): number {
    this.wakers.approved(peer, until)
    if (this.wakers.repeated(peer, free)) return this.unheed('repeated')
    const allowed = this.allowance(peer)
    let room = free
    const woken: Waiter[] = []
    for (const [jobId, w] of this.waiters) {
      if (woken.length >= allowed) break
      // A job that gives no disk gets the provider's default quota: disk is not compared then.
      const need = w.resources.diskBytes === 0 ? { ...w.resources, diskBytes: room.diskBytes } : w.resources
      if (!fits(need, room)) continue
      room = sub(room, need)
      this.waiters.delete(jobId)
      woken.push(w)
    }
    this.wakers.spend(peer, woken.length)
    this.woken += woken.length
    for (const w of woken) w.wake(`capacity ${peer}`)
    return woken.length
  }

  /** The jobs `peer` may wake now (none for a stranger); no credit is counted when some wait. */
  private allowance(peer: string): number {
    if (!this.wakers.isApproved(peer)) return 0
    const n = this.wakers.allowance(peer)
    return n > 0 ? n : this.unheed('no_credit')
  }

  private unheed(why: Unheeded): 0 {
    if (this.waiters.size > 0) this.unheeded[why] = (this.unheeded[why] ?? 0) + 1
    return 0
  }
}
