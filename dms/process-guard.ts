/**
 * The last resort of a serving node (`dms run`): an error that a dependency throws outside any
 * call of ours (an event emitted with no listener, a callback that throws, a promise nobody
 * awaits) is logged and counted, and the node keeps serving. Policy and what stays fatal:
 * specs/protocol.md, "Faults a node survives".
 *
 * Why not exit, as Node does by default: one bad answer from a peer or from the engine would
 * then take down every running job and orphan its container. Every state change is persisted in
 * one atomic batch and every machine restores idempotently, so a failed handler leaves a record
 * where it was, not half-written; the fault stays visible in the log and in
 * `dms_process_faults_total`.
 */
import type { Logger } from 'pino'

export type FaultKind = 'uncaughtException' | 'unhandledRejection'

/** What the guard has caught so far, by kind (for /metrics). */
export interface ProcessFaults {
  counts(): Readonly<Record<FaultKind, number>>
  /** Calls `fn` with each fault caught from now on; returns the unsubscribe function. */
  observe(fn: (kind: FaultKind) => void): () => void
}

export class ProcessGuard implements ProcessFaults {
  private readonly caught: Record<FaultKind, number> = { uncaughtException: 0, unhandledRejection: 0 }
  private readonly onException = (err: unknown) => this.record('uncaughtException', err)
  private readonly onRejection = (reason: unknown) => this.record('unhandledRejection', reason)
  private installed = false
  private readonly observers = new Set<(kind: FaultKind) => void>()

  constructor(
    private readonly c: { log: Logger },
    private readonly target: NodeJS.Process = process,
  ) {}

  counts(): Readonly<Record<FaultKind, number>> {
    return { ...this.caught }
  }

  observe(fn: (kind: FaultKind) => void): () => void {
    this.observers.add(fn)
    return () => this.observers.delete(fn)
  }

  /** From now on such errors are logged and counted instead of ending the process. Idempotent. */
  install(): this {
    if (this.installed) return this
    this.installed = true
    this.target.on('uncaughtException', this.onException)
    this.target.on('unhandledRejection', this.onRejection)
    return this
  }

  /** Back to Node's default: such an error ends the process. */
  uninstall(): void {
    if (!this.installed) return
    this.installed = false
    this.target.off('uncaughtException', this.onException)
    this.target.off('unhandledRejection', this.onRejection)
  }

  private record(kind: FaultKind, err: unknown): void {
    this.caught[kind]++
    try {
      for (const fn of this.observers) fn(kind)
      this.c.log.error(
        { err, fault: kind, count: this.caught[kind] },
        `${kind} caught: the node keeps serving`,
      )
    } catch {
      // A logger that throws must not turn the guard into a crash loop.
    }
  }
}
