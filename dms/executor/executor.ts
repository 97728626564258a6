/**
 * The Executor runs one allocation's workload and reports what happened. The provider's allocation
 * code depends only on this interface; `docker/` is the real implementation.
 */

export type AllocationId = string
export type JobId = string

/** What to run, as agreed in the contract. */
export interface ExecutionSpec {
  jobId: JobId
  allocationId: AllocationId
  image: string
  /** argv; the first element is the program. Imported images have no default command. */
  command: string[]
  env?: Record<string, string>
  /** CPU cores (fractions allowed), enforced as a CPU quota. */
  cpu: number
  /** Memory limit in bytes; memory+swap is set to the same value (no swap). */
  memoryBytes: number
  /** Wall-clock limit in seconds; the container is killed when it passes. */
  timeoutSeconds: number
  /** Whether the container may use the network. @default false */
  network?: boolean
  /** Max processes in the container. @default 256 */
  pidsLimit?: number
}

/** One output file collected from the container's /outputs. */
export interface OutputFile {
  /** Path relative to /outputs, with forward slashes. */
  path: string
  /** sha256 of the content, hex. */
  sha256: string
  size: number
  /** Content, base64. */
  contentBase64: string
}

export interface ResourceUsage {
  wallSeconds: number
  cpuSeconds: number
  peakMemoryBytes: number
}

export type ExecutionStatus = 'completed' | 'failed' | 'timed_out' | 'cancelled'

export interface ExecutionResult {
  status: ExecutionStatus
  exitCode: number
  /** Why it failed, for a person: e.g. "exit code 3", "memory limit exceeded", "timed out after 5s". */
  reason?: string
  stdout: string
  stderr: string
  /** true when stdout or stderr was cut at the size cap. */
  truncated: boolean
  outputs: OutputFile[]
  /** sha256 over the outputs in path order (see `hashOutputs`), hex. */
  outputsHash: string
  usage: ResourceUsage
}

/** Progress of one execution, for job updates. */
export type ExecutionEvent =
  | { type: 'created'; containerId: string }
  | { type: 'started' }
  | { type: 'log'; stream: 'stdout' | 'stderr'; chunk: string }
  | { type: 'exited'; exitCode: number }

export interface RunOptions {
  signal?: AbortSignal
  onEvent?: (event: ExecutionEvent) => void
}

export interface Executor {
  /** Engine name and version, or an error if the engine is unusable. */
  info(): Promise<{ name: string; version: string }>
  /** Whether the image exists locally (no registry is assumed). */
  hasImage(image: string): Promise<boolean>
  /**
   * Runs the spec to the end and always cleans up the container. Aborting `signal` stops the
   * container and resolves with status `cancelled`. Rejects only when the run could not be
   * attempted at all (e.g. the image is missing: `ImageNotFoundError`).
   */
  run(spec: ExecutionSpec, options?: RunOptions): Promise<ExecutionResult>
}
