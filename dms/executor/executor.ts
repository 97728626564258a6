/**
 * What an engine runs and what it reports: the execution spec, its result and its events. The
 * engine itself (the interface the provider depends on) is `engine.ts`.
 */

import type { OutputsSkipped } from '../workload/outputs.js'
import type { Workload } from '../workload/workload.js'

export type { OutputsSkipped } from '../workload/outputs.js'
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
  /**
   * The host's GPUs this run gets, by index (nvidia-smi's; `MachineInfo.gpus[].index`): the ones
   * the provider's ledger holds for it, as many as the workload asks. The engine passes exactly
   * these, never others; a workload asking GPUs without them is refused.
   */
  gpuIndices?: number[]
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
 * A run's output files as one deterministic tar on the host (dms/workload/tar.ts), written and hashed
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
  /**
   * With GPUs: busy GPU-seconds, each sample's utilisation (0..1 per GPU) times the time since
   * the one before, over the run's GPUs (common/gpu-meter.ts). Absent without GPUs.
   */
  gpuSeconds?: number
  /** With GPUs: the most memory its GPUs held at once, as sampled. Absent without GPUs. */
  gpuPeakMemoryBytes?: number
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
  | ({ type: 'created'; handle: string } & OfMember)
  | ({ type: 'reattached'; handle: string; running: boolean } & OfMember)
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
