/**
 * One start/stop stack for a process's parts (both node kinds use it): each part's stop is pushed
 * as soon as the part has started, `stop` runs them last-first, and a start that fails stops
 * exactly what it had started. `start` and `stop` are idempotent.
 */

export type LifecycleStatus = 'stopped' | 'starting' | 'started' | 'stopping'

/** Where a stop that threw is reported (the others still run). */
export type StopErrorHandler = (err: unknown, part: string | undefined) => void

export class Lifecycle {
  private readonly stack: Array<{ stop: () => unknown; part?: string }> = []
  private state: LifecycleStatus = 'stopped'
  private starting?: Promise<void>
  private stopping?: Promise<void>

  constructor(private readonly onStopError: StopErrorHandler = () => undefined) {}

  get status(): LifecycleStatus {
    return this.state
  }

  /** Registers the stop of a part that has just started (`part` names it in reports). */
  onStop(stop: () => unknown, part?: string): void {
    this.stack.push({ stop, part })
  }

  /**
   * Runs `startParts` (which calls `onStop` after each part it starts) unless started already or
   * starting (then it waits for that start). If it throws, what it started is stopped and the
   * error rethrown.
   */
  async start(startParts: () => Promise<void>): Promise<void> {
    if (this.state === 'started') return
    if (this.starting !== undefined) return this.starting
    if (this.stopping !== undefined) await this.stopping
    this.state = 'starting'
    this.starting = (async () => {
      try {
        await startParts()
        this.state = 'started'
      } catch (err) {
        await this.unwind()
        throw err
      } finally {
        this.starting = undefined
      }
    })()
    return this.starting
  }

  /** Stops every started part, last started first; a start in progress is let finish first. */
  async stop(): Promise<void> {
    if (this.starting !== undefined) await this.starting.catch(() => undefined)
    if (this.stopping !== undefined) return this.stopping
    if (this.state === 'stopped' && this.stack.length === 0) return
    this.stopping = this.unwind().finally(() => (this.stopping = undefined))
    return this.stopping
  }

  private async unwind(): Promise<void> {
    this.state = 'stopping'
    for (let p = this.stack.pop(); p !== undefined; p = this.stack.pop()) {
      try {
        await p.stop()
      } catch (err) {
        this.onStopError(err, p.part)
      }
    }
    this.state = 'stopped'
  }
}
