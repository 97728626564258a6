import type { Clock } from '../../actors/clock.js'
import type { Handle } from '../../actors/envelope.js'
import { LIMITS } from '../protocol/bounds.js'
import type { Bid } from '../contracts/model.js'
import type { Decline, JobLog, JobResult, JobUpdate, LiveUsage } from '../protocol/messages.js'

/** Characters of live output kept per stream while a job runs (the result carries the final copy). */
const LIVE_LOG_CAP = 1024 * 1024

/**
 * What arrives for one job while its machine waits: bids and declines during the bid window,
 * updates and the result while it runs. Waiters are woken by arrivals, never by polling.
 */
export class JobSession {
  readonly bids: Bid[] = []
  readonly declines: Decline[] = []
  readonly updates: JobUpdate[] = []
  readonly providerAddrs = new Map<string, string[]>()
  result?: JobResult
  /** Live output by member ('' for a single container); LIVE_LOG_CAP per stream over all of them. */
  private readonly live = new Map<string, { stdout: string; stderr: string }>()
  private readonly liveTotal = { stdout: 0, stderr: 0 }
  private liveTruncated = false
  private nextLogSeq = 0
  /** When the provider was last heard from (update or heartbeat), clock ms; 0 = not yet. */
  lastSeen = 0
  private wake: Array<() => void> = []

  /** `clock` runs the waits' timeouts (`until`). */
  constructor(private readonly clock: Clock) {}

  addBid(bid: Bid, from: Handle): void {
    if (this.bids.some((b) => b.provider === bid.provider)) return // one bid per provider and job
    this.bids.push(bid)
    this.providerAddrs.set(bid.provider, from.addrs)
    this.notify()
  }

  addDecline(d: Decline): void {
    if (this.declines.some((x) => x.provider === d.provider)) return
    this.declines.push(d)
    this.notify()
  }

  /** Forgets the declines `drop` picks (before asking those providers again). */
  dropDeclines(drop: (d: Decline) => boolean): void {
    const keep = this.declines.filter((d) => !drop(d))
    this.declines.length = 0
    this.declines.push(...keep)
  }

  /** Kept up to `LIMITS.updates` (a run sends about six); heartbeats only mark the provider seen. */
  addUpdate(u: JobUpdate, now: number, heartbeat = false): void {
    if (!heartbeat && this.updates.length < LIMITS.updates) this.updates.push(u)
    if (u.usage !== undefined) this.usage = { ...u.usage, at: now }
    this.lastSeen = now
    this.notify()
  }

  /** Live output, in `seq` order, capped per stream; a repeated or out-of-order piece is dropped. */
  addLog(l: JobLog): void {
    if (l.seq < this.nextLogSeq) return
    this.nextLogSeq = l.seq + 1
    const room = LIVE_LOG_CAP - this.liveTotal[l.stream]
    if (l.data.length > room) this.liveTruncated = true
    if (room <= 0) return
    const key = l.member ?? ''
    const kept = this.live.get(key) ?? { stdout: '', stderr: '' }
    const piece = l.data.slice(0, room)
    kept[l.stream] += piece
    this.liveTotal[l.stream] += piece.length
    this.live.set(key, kept)
  }

  /** The output so far: the single container's, or with `member` that pod member's. */
  logs(member?: string): { stdout: string; stderr: string; truncated: boolean } {
    const kept = this.live.get(member ?? '') ?? { stdout: '', stderr: '' }
    return { ...kept, truncated: this.liveTruncated }
  }

  /** The usage so far its provider last reported (heartbeats), with when it came; not stored. */
  usage?: LiveUsage & { at: number }

  /** Forgets the previous round (a re-bid after a provider fault). */
  reset(): void {
    this.usage = undefined
    this.bids.length = 0
    this.declines.length = 0
    this.updates.length = 0
    this.result = undefined
    this.lastSeen = 0
    this.live.clear()
    this.liveTotal.stdout = 0
    this.liveTotal.stderr = 0
    this.liveTruncated = false
    this.nextLogSeq = 0
  }

  setResult(r: JobResult): void {
    this.result ??= r
    this.notify()
  }

  /**
   * Resolves with true once `ready()` is (checked at each arrival), with `ready()` after
   * `timeoutMs` on the clock, or rejects when `signal` aborts.
   */
  until(ready: () => boolean, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const finish = (v: boolean | Error) => {
        this.clock.clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        this.wake = this.wake.filter((w) => w !== check)
        if (v instanceof Error) reject(v)
        else resolve(v)
      }
      const check = () => {
        if (ready()) finish(true)
      }
      const onAbort = () => finish((signal.reason as Error) ?? new Error('aborted'))
      const timer = this.clock.setTimeout(() => finish(ready()), Math.max(0, timeoutMs))
      signal.addEventListener('abort', onAbort, { once: true })
      this.wake.push(check)
      check()
    })
  }

  private notify(): void {
    for (const w of [...this.wake]) w()
  }
}
