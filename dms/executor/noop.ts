/**
 * NoopExecutor: for benchmarks and tests only. It runs nothing: every run "completes" at once with
 * exit code 0, no output and no usage, so a benchmark can measure the orchestration path alone
 * (bid, lock, contract, invocation, result, settlement) without a container engine. No config
 * selects it: only code that builds a node with `components.executor` can. It does not pass the
 * engine-compliance suite (it enforces no limit and runs nothing), and is not meant to.
 */
import { AllocationNotFoundError } from './errors.js'
import type { Engine, EngineCapabilities, EngineRun } from './engine.js'
import type { ExecutionResult, ExecutionSpec, RunOptions } from './executor.js'
import { hashOutputs } from '../workload/outputs.js'

export class NoopExecutor implements Engine {
  /** Runs started so far (for assertions): a run whose `startAfter` rejected is not counted. */
  runs = 0

  capabilities(): Promise<EngineCapabilities> {
    return Promise.resolve({
      name: 'noop',
      version: '0',
      available: true,
      artifactKinds: ['image', 'bundle'],
      gpus: true,
      networkPolicies: ['none', 'open'],
      diskQuota: false,
      fetchesArtifacts: false,
    })
  }
  hasArtifact(): Promise<boolean> {
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
  listRuns(): Promise<EngineRun[]> {
    return Promise.resolve([])
  }
  reattach(spec: ExecutionSpec): Promise<ExecutionResult> {
    return Promise.reject(new AllocationNotFoundError(spec.allocationId))
  }
  removeAllocation(): Promise<void> {
    return Promise.resolve()
  }
}
