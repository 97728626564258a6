/**
 * The result of a container that ran: its status from how it ended (outcome.ts), then its outputs.
 * What ran is never erased by what collection finds: the status, exit code, usage and logs are
 * settled before the outputs are looked at, and outputs that are refused (over a limit, or not
 * archivable) only turn a `completed` run into a `failed` one, with the exit code kept, so the
 * provider is paid for the time used (specs/contract-db.md, "Billing").
 */
import type { ExecutionResult, ResourceUsage } from '../executor.js'
import { hashOutputs } from '../../workload/outputs.js'
import { collectOutputs, type CollectLimits } from './collect-outputs.js'
import { quotaReached } from './disk-quota.js'
import { classifyExit, type StopReason } from './outcome.js'

export interface FinishedRun {
  exitCode: number
  stopRequested: StopReason | undefined
  killed: boolean
  oomKilled: boolean
  timeoutSeconds: number
  usage: ResourceUsage
  stdout: string
  stderr: string
  truncated: boolean
  /** The host folder that was the container's /outputs. */
  outputsDir: string
  /** Where the outputs' tar is written. */
  archiveFile: string
  /** The kernel quota on /outputs, when there is one. */
  quotaBytes: number | undefined
  limits: CollectLimits
}

export async function runResult(run: FinishedRun): Promise<ExecutionResult> {
  let { status, reason } = classifyExit({
    stopRequested: run.stopRequested,
    killed: run.killed,
    oomKilled: run.oomKilled,
    exitCode: run.exitCode,
    timeoutSeconds: run.timeoutSeconds,
  })
  if (
    status === 'failed' &&
    run.quotaBytes !== undefined &&
    (await quotaReached(run.outputsDir, run.quotaBytes))
  ) {
    reason = joinReasons(`disk quota exceeded (${run.quotaBytes} bytes on /outputs)`, reason)
  }
  const collected = await collectOutputs(run.outputsDir, run.archiveFile, run.limits)
  if (collected.refused !== undefined) {
    if (status === 'completed') {
      status = 'failed'
      reason = collected.refused
    } else {
      reason = joinReasons(reason, collected.refused)
    }
  }
  return {
    status,
    exitCode: run.exitCode,
    ...(reason !== undefined ? { reason } : {}),
    stdout: run.stdout,
    stderr: run.stderr,
    truncated: run.truncated,
    outputs: collected.files,
    ...(collected.archive !== undefined ? { archive: collected.archive } : {}),
    outputsHash: hashOutputs(collected.files),
    ...(collected.skipped !== undefined ? { outputsSkipped: collected.skipped } : {}),
    usage: run.usage,
  }
}

function joinReasons(a: string | undefined, b: string | undefined): string | undefined {
  return [a, b].filter((r) => r !== undefined && r !== '').join('; ') || undefined
}
