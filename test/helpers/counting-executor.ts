/**
 * A test executor (no Docker: these tests count runs, not containers) whose runs succeed after
 * `holdMs` of real time each, counting how many run at once. Named as such; the nodes, libp2p,
 * level and the contract-db around it are real.
 */
import type { ExecutionResult } from '../../dms/executor/executor.js'
import { hashOutputs } from '../../dms/protocol/outputs.js'
import { TestExecutor } from './test-executor.js'

export class CountingExecutor extends TestExecutor {
  running = 0
  maxRunning = 0
  /** Runs wait for this before they end (the test opens it), when set. */
  gate?: Promise<void>

  constructor(private readonly holdMs = 20) {
    super('counting')
  }

  override async run(): Promise<ExecutionResult> {
    this.runs++
    this.running++
    this.maxRunning = Math.max(this.maxRunning, this.running)
    try {
      await (this.gate ?? new Promise<void>((r) => setTimeout(r, this.holdMs)))
    } finally {
      this.running--
    }
    return {
      status: 'completed',
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
