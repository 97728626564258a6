/**
 * Base for the test executors that stand in for Docker where a test injects a fault the engine
 * cannot produce on demand (a provider that goes silent, a run held until the test releases it).
 * Named as such; everything else in those tests is real. It is the noop executor (every image is
 * runnable, nothing is left over from an earlier process) under its own name, with `run` left to
 * each test.
 */
import type { EngineCapabilities } from '../../dms/executor/engine.js'
import type { ExecutionResult, ExecutionSpec, RunOptions } from '../../dms/executor/executor.js'
import { NoopExecutor } from '../../dms/executor/noop.js'

export abstract class TestExecutor extends NoopExecutor {
  /** `name`: the engine name its bids carry (1-32 of a-z 0-9 -). */
  constructor(private readonly name: string) {
    super()
  }
  override async capabilities(): Promise<EngineCapabilities> {
    return { ...(await super.capabilities()), name: this.name }
  }
  abstract override run(spec: ExecutionSpec, options?: RunOptions): Promise<ExecutionResult>
}
