/**
 * Base for the test executors that stand in for Docker where a test injects a fault the engine
 * cannot produce on demand (a provider that goes silent, a run held until the test releases it).
 * Named as such; everything else in those tests is real. The defaults: every image is runnable,
 * nothing is left over from an earlier process.
 */
import { AllocationNotFoundError } from '../../dms/executor/errors.js'
import type {
  ExecutionResult,
  ExecutionSpec,
  Executor,
  ExecutorInfo,
  ManagedContainer,
  RunOptions,
} from '../../dms/executor/executor.js'

export abstract class TestExecutor implements Executor {
  constructor(private readonly name: string) {}
  info(): Promise<ExecutorInfo> {
    return Promise.resolve({ name: this.name, version: '0', diskQuota: false, pullsImages: false })
  }
  hasImage(): Promise<boolean> {
    return Promise.resolve(true)
  }
  canRun(): Promise<boolean> {
    return Promise.resolve(true)
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
  abstract run(spec: ExecutionSpec, options?: RunOptions): Promise<ExecutionResult>
}
