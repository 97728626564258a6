/**
 * NoopExecutor: for benchmarks and tests only. It runs nothing: every run "completes" at once with
 * exit code 0, no output and no usage, so a benchmark can measure the orchestration path alone
 * (bid, lock, contract, invocation, result, settlement) without a container engine. No config
 * selects it: only code that builds a node with `components.executor` can.
 */
import { AllocationNotFoundError } from './errors.js'
import type {
  ExecutionResult,
  ExecutionSpec,
  Executor,
  ExecutorInfo,
  ManagedContainer,
  RunOptions,
} from './executor.js'
import { hashOutputs } from '../workload/outputs.js'

export class NoopExecutor implements Executor {
  /** Runs started so far (for assertions): a run whose `startAfter` rejected is not counted. */
  runs = 0

  info(): Promise<ExecutorInfo> {
    return Promise.resolve({
      name: 'noop (benchmarks and tests only)',
      version: '0',
      diskQuota: false,
      pullsImages: false,
    })
  }
  hasImage(): Promise<boolean> {
    return Promise.resolve(true)
  }
  canRun(): Promise<boolean> {
    return Promise.resolve(true)
  }
  async run(_spec: ExecutionSpec, options: RunOptions = {}): Promise<ExecutionResult> {
    if (options.startAfter !== undefined) await options.startAfter
    this.runs++
    options.onEvent?.({ type: 'started' })
    options.onEvent?.({ type: 'exited', exitCode: 0 })
    return {
      status: 'completed',
      exitCode: 0,
      stdout: '',
      stderr: '',
      truncated: false,
      outputs: [],
      outputsHash: hashOutputs([]),
      usage: { wallSeconds: 0, cpuSeconds: 0, peakMemoryBytes: 0 },
    }
  }
  listManaged(): Promise<ManagedContainer[]> {
    return Promise.resolve([])
  }
  reattach(spec: ExecutionSpec): Promise<ExecutionResult> {
    return Promise.reject(new AllocationNotFoundError(spec.allocationId))
  }
  removeAllocation(): Promise<void> {
    return Promise.resolve()
  }
}
