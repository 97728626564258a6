/**
 * The seam every engine sits behind (specs/executor.md, "Engines"): what it can run, as a value
 * the provider compares with a job, and how it runs, re-attaches to and cancels a workload. The
 * provider's code depends only on this interface; `docker/` is the real engine, `noop.ts` the
 * stand-in for benchmarks. Every engine passes `test/helpers/engine-compliance.ts`.
 */
import type { ArtifactRef, EngineCapabilities } from '../workload/capabilities.js'
import type { AllocationId, ExecutionResult, ExecutionSpec, JobId, RunOptions } from './executor.js'

export type {
  ArtifactKind,
  ArtifactRef,
  EngineCapabilities,
  EngineName,
  NetworkPolicy,
} from '../workload/capabilities.js'

/**
 * The engines a provider can offer (`provider.engines`, built by `executorOf` in
 * dms/parts/provider.ts): `docker` runs images, `process` runs runtimes in Linux namespaces.
 */
export const ENGINE_NAMES = ['docker', 'process'] as const

/** A run this engine holds (running or ended, not yet removed), e.g. one left by an earlier process. */
export interface EngineRun {
  allocationId: AllocationId
  jobId: JobId
  /** The engine's own name for it (Docker: the container id): for logs, never compared. */
  handle: string
  running: boolean
  /** The pod member this run is, when it is one. */
  member?: string
}

export interface Engine {
  /** What this engine can run. Never rejects: an engine that does not answer says so in the value. */
  capabilities(): Promise<EngineCapabilities>
  /**
   * Whether a run of `artifact` can start here: it is present, or this engine fetches missing
   * artifacts (`fetchesArtifacts`). Rejects when the engine does not answer.
   */
  hasArtifact(artifact: ArtifactRef): Promise<boolean>
  /**
   * Runs the spec to the end and always cleans up after it. Aborting `options.signal` cancels the
   * run (the engine's only way to cancel): it resolves with status `cancelled`. Rejects only when
   * the run could not be attempted at all (e.g. the artifact is missing: `ImageNotFoundError`).
   */
  run(spec: ExecutionSpec, options?: RunOptions): Promise<ExecutionResult>
  /** The runs of this engine (and owner) that exist now, running or ended. */
  listRuns(): Promise<EngineRun[]>
  /**
   * Takes over the run an earlier process (or engine object) started for `spec.allocationId` and
   * supervises it to the end exactly as `run` would: timeout counted from its start, output
   * replayed, outputs collected, everything cleaned up. Rejects with `AllocationNotFoundError`
   * when there is no such run, or it never started.
   */
  reattach(spec: ExecutionSpec, options?: RunOptions): Promise<ExecutionResult>
  /** Removes what is left of an allocation nobody runs any more. */
  removeAllocation(allocationId: AllocationId): Promise<void>
}

/**
 * What the provider runs allocations through: one engine, or the router over the engines it offers
 * (router.ts), which sends each workload to the engine that runs it. What each engine can run is
 * measured from the engines themselves (`MachineInfo.engines`), not from this.
 */
export type Runner = Omit<Engine, 'capabilities'>
