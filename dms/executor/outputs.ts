import { hashOutputs } from '../workload/outputs.js'
import type { ExecutionResult, ExecutionStatus } from './executor.js'

/** The result of a run whose program never ran (cancelled before start, or could not be started). */
export function notStarted(status: ExecutionStatus, exitCode: number, reason: string): ExecutionResult {
  return {
    status,
    exitCode,
    reason,
    stdout: '',
    stderr: '',
    truncated: false,
    outputs: [],
    outputsHash: hashOutputs([]),
    usage: { wallSeconds: 0, cpuSeconds: 0, peakMemoryBytes: 0 },
  }
}
