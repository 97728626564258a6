/**
 * What each running allocation has used so far, in memory (never stored): the executor's samples
 * (cpu seconds, memory), the log bytes it produced, its wall time. Heartbeats carry it to the
 * requester and `GET /v1/allocations` shows it with the cost so far (specs/protocol.md, "Live usage").
 */
import type { LiveUsage } from '../protocol/messages.js'

interface Entry {
  startedAt: number
  cpuSeconds: number
  memoryBytes: number
  logBytes: number
}

export class LiveUsageBoard {
  private readonly runs = new Map<string, Entry>()

  constructor(private readonly now: () => number) {}

  private entry(id: string): Entry {
    let e = this.runs.get(id)
    if (e === undefined) {
      e = { startedAt: this.now(), cpuSeconds: 0, memoryBytes: 0, logBytes: 0 }
      this.runs.set(id, e)
    }
    return e
  }

  started(id: string): void {
    this.entry(id).startedAt = this.now()
  }

  /** An executor sample: totals so far (cpu only grows, memory keeps its peak). */
  sample(id: string, s: { cpuSeconds: number; memoryBytes: number }): void {
    const e = this.entry(id)
    e.cpuSeconds = Math.max(e.cpuSeconds, s.cpuSeconds)
    e.memoryBytes = Math.max(e.memoryBytes, s.memoryBytes)
  }

  log(id: string, bytes: number): void {
    this.entry(id).logBytes += bytes
  }

  get(id: string): LiveUsage | undefined {
    const e = this.runs.get(id)
    if (e === undefined) return undefined
    return {
      cpuSeconds: e.cpuSeconds,
      memoryBytes: e.memoryBytes,
      logBytes: e.logBytes,
      wallSeconds: Math.max(0, (this.now() - e.startedAt) / 1000),
    }
  }

  /** The run ended: its receipt has the final usage. */
  end(id: string): void {
    this.runs.delete(id)
  }
}
