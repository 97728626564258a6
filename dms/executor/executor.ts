/**
 * The Executor runs one allocation's workload and reports what happened. The provider's allocation
 * code depends only on this interface; `docker/` is the real implementation.
 */

import type { OutputsSkipped } from '../contracts/model.js'
import type { Workload } from '../workload/workload.js'

export type { OutputsSkipped } from '../contracts/model.js'
export type { Workload, WorkloadMember } from '../workload/workload.js'
export type AllocationId = string
export type JobId = string

/**
 * One run of an allocation: the workload as agreed in the contract, carried whole (what runs:
 * dms/workload/), and what the provider adds around it (ids, the timeout, the quota, the inputs).
 */
export interface ExecutionSpec {
  jobId: JobId
  allocationId: AllocationId
  /**
   * What runs. One member runs as one container, its outputs at the archive's root; 2..8 run as a
   * pod (specs/executor.md, "Pods"), each member's outputs under `<member>/`, the disk quota, the
   * timeout, the pids limit and the inputs shared. A member's `network` is run as given: the
   * provider has checked it against its own policy.
   */
  workload: Workload
  /** Wall-clock limit in seconds; the container is killed when it passes. */
  timeoutSeconds: number
  /** Max processes in each container. @default 256 */
  pidsLimit?: number
  /**
   * Bytes the run may write to /outputs, enforced by the kernel (a loop-mounted file system of that
   * size), one quota for the whole workload. The provider always sets it (the job's `disk`, or its
   * default quota). Unset or 0: no quota beyond the executor's `maxOutputBytes` check after the run.
   */
  diskBytes?: number
  /** Host folder mounted read-only at /inputs (the job's staged input blobs). */
  inputsDir?: string
}

/** How one member of a pod ended. */
export interface MemberResult {
  name: string
  status: ExecutionStatus
  exitCode: number
  reason?: string
  stdout: string
  stderr: string
  truncated: boolean
  usage: ResourceUsage
}

/** One output file collected from the container's /outputs. Its bytes are in the run's archive. */
export interface OutputFile {
  /** Path relative to /outputs, with forward slashes. */
  path: string
  /** sha256 of the content, hex. */
  sha256: string
  size: number
}

/**
 * A run's output files as one deterministic tar on the host (dms/blobs/tar.ts), written and hashed
 * as it was collected. Once `run` returns, the file is the caller's to move (into the blob store)
 * or delete.
 */
export interface OutputsArchive {
  /** Absolute path of the tar file. */
  file: string
  /** sha256 of the whole archive, hex. */
  sha256: string
  size: number
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
  /** The manifest: the collected files, sorted by path, without their bytes. */
  outputs: OutputFile[]
  /** The files' bytes; present exactly when `outputs` is not empty. */
  archive?: OutputsArchive
  /** sha256 over the outputs in path order (see `hashOutputs`), hex. */
  outputsHash: string
  /** Entries under /outputs that were left out (unreadable or unnamed), with why. */
  outputsSkipped?: OutputsSkipped
  usage: ResourceUsage
  /**
   * A pod's members, in the spec's order. Then `outputs` hold each member's files under
   * `<member>/`, `stdout`/`stderr` are empty (each member has its own), and `exitCode` and
   * `reason` are those of the first member (in order) that did not complete.
   */
  members?: MemberResult[]
}

/** Progress of one execution, for job updates. */
export type ExecutionEvent =
  | { type: 'pulling'; status: string; progress?: string }
  | ({ type: 'created'; containerId: string } & OfMember)
  | ({ type: 'reattached'; containerId: string; running: boolean } & OfMember)
  | ({ type: 'started' } & OfMember)
  | ({ type: 'log'; stream: 'stdout' | 'stderr'; chunk: string } & OfMember)
  | ({ type: 'exited'; exitCode: number } & OfMember)
  /** A resource sample while the container runs: totals so far (cpu seconds, memory peak). */
  | ({ type: 'usage'; cpuSeconds: number; memoryBytes: number } & OfMember)

/** A pod's container events name their member; a single container's never do. */
export interface OfMember {
  member?: string
}

export interface RunOptions {
  signal?: AbortSignal
  onEvent?: (event: ExecutionEvent) => void
  /**
   * The workload starts only once this settles (the provider's start note, recorded by the
   * contract-db). What is cheap and undoable (the work folder, the disk quota, the container
   * created and attached) is done while it is pending; if it rejects, all that is undone, nothing
   * has started, and `run` rejects with its error.
   */
  startAfter?: Promise<unknown>
}

/** A container this executor created (found by its labels), e.g. one left by an earlier process. */
export interface ManagedContainer {
  allocationId: AllocationId
  jobId: JobId
  containerId: string
  running: boolean
  /** The pod member this container runs, when it is one. */
  member?: string
}

export interface ExecutorInfo {
  name: string
  version: string
  /** Whether `diskBytes` is enforced by the kernel on this machine. */
  diskQuota: boolean
  /** Whether missing images are pulled from a registry. */
  pullsImages: boolean
}

export interface Executor {
  /** Engine name, version and abilities, or an error if the engine is unusable. */
  info(): Promise<ExecutorInfo>
  /** Whether the image exists locally. */
  hasImage(image: string): Promise<boolean>
  /** Whether a run of `image` can be attempted: it is local, or missing images are pulled. */
  canRun(image: string): Promise<boolean>
  /**
   * Runs the spec to the end and always cleans up the container. Aborting `signal` stops the
   * container and resolves with status `cancelled`. Rejects only when the run could not be
   * attempted at all (e.g. the image is missing: `ImageNotFoundError`).
   */
  run(spec: ExecutionSpec, options?: RunOptions): Promise<ExecutionResult>
  /** Containers of this executor that exist now (running or exited), from their labels. */
  listManaged(): Promise<ManagedContainer[]>
  /**
   * Takes over the container an earlier process started for `spec.allocationId` and supervises it
   * to the end exactly as `run` would (timeout counted from the container's start, output replayed
   * from the engine's log, outputs collected, everything cleaned up). Rejects with
   * `AllocationNotFoundError` when no such container exists.
   */
  reattach(spec: ExecutionSpec, options?: RunOptions): Promise<ExecutionResult>
  /** Removes the container and work folder of an allocation nobody runs any more. */
  removeAllocation(allocationId: AllocationId): Promise<void>
}
