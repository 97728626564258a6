import type { ExecutionStatus } from '../executor.js'

/** Why this process stopped the container, if it did ('pod': another member of its pod failed). */
export type StopReason = 'timed_out' | 'cancelled' | 'pod'

export interface ExitFacts {
  /** Set when a timeout or an abort asked for the container to be killed. */
  stopRequested: StopReason | undefined
  /** Whether that kill reached a running container (false: it had already exited on its own). */
  killed: boolean
  /** The engine's State.OOMKilled. */
  oomKilled: boolean
  exitCode: number
  timeoutSeconds: number
}

/**
 * Status and reason of a run that started. Our own kill wins (its exit code 137 is ours, not the
 * program's), then the memory limit (the OOM killer may hit a child, so the exit code alone does
 * not tell), then the exit code.
 */
export function classifyExit(facts: ExitFacts): { status: ExecutionStatus; reason?: string } {
  if (facts.stopRequested !== undefined && facts.killed) {
    if (facts.stopRequested === 'timed_out') {
      return { status: 'timed_out', reason: `timed out after ${facts.timeoutSeconds}s` }
    }
    return facts.stopRequested === 'pod'
      ? { status: 'cancelled', reason: 'stopped: another member of the pod did not complete' }
      : { status: 'cancelled', reason: 'cancelled' }
  }
  if (facts.oomKilled) return { status: 'failed', reason: 'memory limit exceeded' }
  if (facts.exitCode !== 0) return { status: 'failed', reason: `exit code ${facts.exitCode}` }
  return { status: 'completed' }
}

/** The share of its memory limit at which a SIGKILLed container is taken as out of memory. */
export const OOM_PEAK_SHARE = 0.9

export interface MemoryFacts {
  /** The engine's State.OOMKilled. */
  engineSaid: boolean
  exitCode: number
  /** Whether this process killed the container (then 137 is ours). */
  killedByUs: boolean
  /** The highest memory use sampled (cgroup v1: the cgroup's own high-water mark). 0: none seen. */
  peakMemoryBytes: number
  /** The container's memory limit; 0: none. */
  memoryLimitBytes: number
}

/**
 * Whether the memory limit ended the run. Docker says so (OOMKilled); podman leaves OOMKilled
 * false and reports only exit code 137 (SIGKILL), so a SIGKILL that nobody here sent, with memory
 * seen at the limit, is taken as the kernel's OOM kill.
 */
export function outOfMemory(f: MemoryFacts): boolean {
  if (f.engineSaid) return true
  return (
    f.exitCode === 137 &&
    !f.killedByUs &&
    f.memoryLimitBytes > 0 &&
    f.peakMemoryBytes >= OOM_PEAK_SHARE * f.memoryLimitBytes
  )
}

/**
 * Seconds from start to exit as the engine recorded them (State.StartedAt/FinishedAt, nanosecond
 * timestamps); `measured` (from this side of the socket) when those are missing.
 */
export function wallSeconds(state: { StartedAt?: string; FinishedAt?: string }, measured: number): number {
  const started = parseDockerTime(state.StartedAt)
  const finished = parseDockerTime(state.FinishedAt)
  return started !== undefined && finished !== undefined && finished >= started
    ? (finished - started) / 1000
    : measured
}

/** Milliseconds since the epoch of a Docker RFC 3339 timestamp with up to nanosecond precision. */
export function parseDockerTime(value: string | undefined): number | undefined {
  if (value === undefined || value.startsWith('0001-')) return undefined
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(value)
  if (match === null) return undefined
  const seconds = Date.parse(`${match[1]}${match[3]}`)
  if (Number.isNaN(seconds)) return undefined
  const fraction = match[2] === undefined ? 0 : Number(`0.${match[2]}`)
  return seconds + fraction * 1000
}
