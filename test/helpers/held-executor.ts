/**
 * A test executor (it stands in for Docker where a test must hold runs until it says): every run
 * waits until `open()` (then completes) or until aborted (then is cancelled).
 */
import type { ExecutionResult, RunOptions } from '../../dms/executor/executor.js'
import { hashOutputs } from '../../dms/workload/outputs.js'
import { TestExecutor } from './test-executor.js'

export class HeldExecutor extends TestExecutor {
  started = 0
  /** Runs aborted (the provider cancelled them). */
  cancelled = 0
  private opened = false
  private readonly waiters = new Set<() => void>()
  private readonly startWaiters: Array<{ n: number; resolve: () => void }> = []
  constructor() {
    super('held') // a test engine
  }
  /** Resolves once `n` runs have started in all. */
  runsStarted(n: number): Promise<void> {
    return this.started >= n
      ? Promise.resolve()
      : new Promise((resolve) => this.startWaiters.push({ n, resolve }))
  }
  open(): void {
    this.opened = true
    for (const w of this.waiters) w()
  }
  run(_spec: unknown, opts: RunOptions = {}): Promise<ExecutionResult> {
    this.started++
    for (const w of this.startWaiters.filter((s) => s.n <= this.started)) w.resolve()
    const result = (status: 'completed' | 'cancelled'): ExecutionResult => ({
      status,
      exitCode: status === 'completed' ? 0 : -1,
      stdout: '',
      stderr: '',
      truncated: false,
      outputs: [],
      outputsHash: hashOutputs([]),
      usage: { wallSeconds: 1, cpuSeconds: 0, peakMemoryBytes: 0 },
    })
    if (this.opened) return Promise.resolve(result('completed'))
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done)
        resolve(result('completed'))
      }
      this.waiters.add(done)
      opts.signal?.addEventListener('abort', () => {
        this.waiters.delete(done)
        this.cancelled++
        resolve(result('cancelled'))
      })
    })
  }
}
