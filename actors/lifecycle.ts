/**
 * One start/stop stack for a process's parts (both node kinds use it): each part's stop is pushed
 * as soon as the part has started, `stop` runs them last-first, and a start that fails stops
 * exactly what it had started. `start` and `stop` are idempotent.
 */

export type LifecycleStatus = 'stopped' | 'starting' | 'started' | 'stopping'

/** Where a stop that threw is reported (the others still run). */
export type StopErrorHandler = (err: unknown, part: string | undefined) => void

/** Where the part whose start failed is reported (before what had started is stopped). */
export type StartErrorHandler = (err: unknown, part: string) => void

/** A long-lived part: the same `start()`/`stop()` for every part of a process. */
export interface Startable {
  start(): Promise<void>
  stop(): Promise<void>
}

/** A part in a list: its name (in reports), and what it gives the parts after it once started. */
export interface Part<C> extends Startable {
  readonly name: string
  /** Merged into the components of the parts after it, once it has started. */
  readonly provides?: Partial<C>
}

/**
 * Builds one part over the components of the parts before it (js-libp2p's `(components) => part`);
 * `undefined` when the process has no such part (a role it does not play).
 */
export type PartFactory<C> = (components: C) => Part<C> | undefined | Promise<Part<C> | undefined>

export class Lifecycle {
  private readonly stack: Array<{ stop: () => unknown; part?: string }> = []
  private state: LifecycleStatus = 'stopped'
  private starting?: Promise<void>
  private stopping?: Promise<void>

  constructor(
    private readonly onStopError: StopErrorHandler = () => undefined,
    private readonly onStartError: StartErrorHandler = () => undefined,
  ) {}

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

  /**
   * Builds and starts the parts of `factories` in list order over `components` (each started
   * part's `provides` merged in for the parts after it); `stop` stops them in reverse. A part that
   * fails to build or start is reported by name (`onStartError`), what had started is stopped,
   * last first, and its error rethrown as it was.
   */
  startList<C extends object>(components: C, factories: ReadonlyArray<PartFactory<C>>): Promise<void> {
    return this.start(async () => {
      for (const [i, factory] of factories.entries()) {
        let part: Part<C> | undefined
        try {
          part = await factory(components)
          await part?.start()
        } catch (err) {
          this.onStartError(err, part?.name ?? (factory.name || `part ${i}`))
          throw err
        }
        if (part === undefined) continue
        const started = part
        this.onStop(() => started.stop(), started.name)
        Object.assign(components, started.provides)
      }
    })
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
