/**
 * A pod's result from its members' ends (specs/executor.md, "Pods"): each member classified as a
 * single container is (outcome.ts), then the one archive of the pod's outputs (`<member>/...`).
 * The allocation completes when every member did; otherwise it takes the status, exit code and
 * reason of the member that caused the end (the first, in order, that did not complete by itself;
 * members stopped because of it are `cancelled`).
 */
import type { ExecutionResult, MemberResult, ResourceUsage } from '../executor.js'
import { hashOutputs } from '../../workload/outputs.js'
import { collectOutputs, type CollectLimits } from '../common/collect-outputs.js'
import { quotaReached } from '../common/disk-quota.js'
import { classifyExit } from '../common/outcome.js'
import type { Ended } from './supervise.js'

/** A member's end, or why it never ran (its container was gone or never started). */
export type MemberEnd = { name: string; ended: Ended } | { name: string; lost: string }

export interface PodFinish {
  members: MemberEnd[]
  timeoutSeconds: number
  /** The pod's outputs folder (the quota mount). */
  outputsDir: string
  /** The shared scratch folder's name at its top, never collected. */
  scratch: string
  archiveFile: string
  quotaBytes: number | undefined
  limits: CollectLimits
}

/** Each member's status and reason, as a single container's would be. */
export function memberResults(ends: readonly MemberEnd[], timeoutSeconds: number): MemberResult[] {
  return ends.map((m): MemberResult => {
    if ('lost' in m) {
      return {
        name: m.name,
        status: 'failed',
        exitCode: -1,
        reason: m.lost,
        stdout: '',
        stderr: '',
        truncated: false,
        usage: { wallSeconds: 0, cpuSeconds: 0, peakMemoryBytes: 0 },
      }
    }
    const e = m.ended
    const { status, reason } = classifyExit({ ...e, timeoutSeconds })
    return {
      name: m.name,
      status,
      exitCode: e.exitCode,
      ...(reason !== undefined ? { reason } : {}),
      stdout: e.stdout,
      stderr: e.stderr,
      truncated: e.truncated,
      usage: e.usage,
    }
  })
}

/** The member whose end decides the pod's, or undefined when every member completed. */
export function causeOf(
  members: readonly MemberResult[],
  ends: readonly MemberEnd[],
): MemberResult | undefined {
  const stoppedForPod = (i: number): boolean => {
    const e = ends[i]
    return e !== undefined && 'ended' in e && e.ended.stopRequested === 'pod' && e.ended.killed
  }
  const notCompleted = members.map((m, i) => ({ m, i })).filter(({ m }) => m.status !== 'completed')
  return (notCompleted.find(({ i }) => !stoppedForPod(i)) ?? notCompleted[0])?.m
}

/** Wall time is the longest member's; cpu seconds and memory peaks add up (an upper bound). */
export function podUsage(members: readonly MemberResult[]): ResourceUsage {
  return members.reduce(
    (u, m) => ({
      wallSeconds: Math.max(u.wallSeconds, m.usage.wallSeconds),
      cpuSeconds: u.cpuSeconds + m.usage.cpuSeconds,
      peakMemoryBytes: u.peakMemoryBytes + m.usage.peakMemoryBytes,
    }),
    { wallSeconds: 0, cpuSeconds: 0, peakMemoryBytes: 0 },
  )
}

export async function podResult(run: PodFinish): Promise<ExecutionResult> {
  const members = memberResults(run.members, run.timeoutSeconds)
  const cause = causeOf(members, run.members)
  let status = cause?.status ?? 'completed'
  let reason = cause !== undefined ? `member ${cause.name}: ${cause.reason ?? cause.status}` : undefined
  if (
    status === 'failed' &&
    run.quotaBytes !== undefined &&
    (await quotaReached(run.outputsDir, run.quotaBytes))
  ) {
    reason = join(`disk quota exceeded (${run.quotaBytes} bytes on /outputs and /pod)`, reason)
  }
  const collected = await collectOutputs(run.outputsDir, run.archiveFile, run.limits, run.scratch)
  if (collected.refused !== undefined) {
    if (status === 'completed') status = 'failed'
    reason = join(reason, collected.refused)
  }
  return {
    status,
    exitCode: cause?.exitCode ?? 0,
    ...(reason !== undefined ? { reason } : {}),
    stdout: '',
    stderr: '',
    truncated: members.some((m) => m.truncated),
    outputs: collected.files,
    ...(collected.archive !== undefined ? { archive: collected.archive } : {}),
    outputsHash: hashOutputs(collected.files),
    ...(collected.skipped !== undefined ? { outputsSkipped: collected.skipped } : {}),
    usage: podUsage(members),
    members,
  }
}

function join(a: string | undefined, b: string | undefined): string | undefined {
  return [a, b].filter((r) => r !== undefined && r !== '').join('; ') || undefined
}
