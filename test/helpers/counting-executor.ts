/**
 * A test executor (no Docker: these tests count runs, not containers) whose runs succeed after
 * `holdMs` of real time each, counting how many run at once. Named as such; the nodes, libp2p,
 * level and the contract-db around it are real.
 */
import type { ExecutionResult, ExecutionSpec, RunOptions } from '../../dms/executor/executor.js'
import { hashOutputs } from '../../dms/workload/outputs.js'
import { TestExecutor } from './test-executor.js'

export class CountingExecutor extends TestExecutor {
  running = 0
  maxRunning = 0
  /** Runs wait for this before they end (the test opens it), when set. */
  gate?: Promise<void>

  constructor(private readonly holdMs = 20) {
    super('counting')
  }

  override async run(_spec: ExecutionSpec, options: RunOptions = {}): Promise<ExecutionResult> {
    this.runs++
    this.running++
    this.maxRunning = Math.max(this.maxRunning, this.running)
    options.onEvent?.({ type: 'started' })
    // A cancel (the signal) stops the run at once, as the Docker executor stops its container.
    const aborted = new Promise<'aborted'>((r) => {
      if (options.signal?.aborted === true) r('aborted')
      options.signal?.addEventListener('abort', () => r('aborted'), { once: true })
    })
    let end: void | 'aborted'
    try {
      end = await Promise.race([this.gate ?? new Promise<void>((r) => setTimeout(r, this.holdMs)), aborted])
    } finally {
      this.running--
    }
    return {
      status: end === 'aborted' ? 'cancelled' : 'completed',
      exitCode: 0,
      stdout: 'ok\n',
      stderr: '',
      truncated: false,
      outputs: [],
      outputsHash: hashOutputs([]),
      usage: { wallSeconds: this.holdMs / 1000, cpuSeconds: 0.01, peakMemoryBytes: 1024 },
    }
  }
}
