/**
 * A container's CPU limit, as a CFS quota per period (specs/executor.md, "The CPU limit at the
 * start"). The runtime sets the container up (runc init, then the workload's exec) inside the
 * container's own cgroup, under its quota: with the engine's usual 100 ms period a 0.1-core job
 * gets 10 ms per period, and the start itself was throttled for tens of milliseconds. So a
 * container is created with a longer period holding the SAME share (at least START_BURST_US of
 * quota, the period at most 1 s), which lets the start through unthrottled, and is tightened to
 * the 100 ms period right after the start. The share never changes: the limit is in force from
 * the first instant, only the period over which it is averaged is longer during the start.
 */
import type Docker from 'dockerode'
import type { Logger } from 'pino'
import { cpuProblem } from '../../workload/run-rules.js'
import { InvalidSpecError } from '../errors.js'
import { dockerMessage, dockerStatus } from './docker-errors.js'

/** The period a running container's quota is counted over (the engine's own default). */
export const RUNNING_PERIOD_US = 100_000
/** The quota a container gets in its first period: what the runtime's set-up needs, with room. */
export const START_BURST_US = 50_000
/** The longest period the engine accepts. */
export const MAX_PERIOD_US = 1_000_000

export interface CpuLimit {
  CpuPeriod: number
  CpuQuota: number
}

function checked(cpu: number): number {
  const problem = cpuProblem(cpu)
  if (problem !== undefined) throw new InvalidSpecError('cpu', problem)
  return cpu
}

/** `cpu` cores over `period` µs; never 0 (which the engine reads as "no limit"). */
const over = (cpu: number, period: number): CpuLimit => ({
  CpuPeriod: period,
  CpuQuota: Math.max(1000, Math.round(cpu * period)),
})

/** The limit a running container keeps: `cpu` cores per 100 ms. */
export function runningCpuLimit(cpu: number): CpuLimit {
  return over(checked(cpu), RUNNING_PERIOD_US)
}

/** The limit a container is created with: the same share, over a period long enough for the start. */
export function startCpuLimit(cpu: number): CpuLimit {
  const period = Math.min(
    MAX_PERIOD_US,
    Math.max(RUNNING_PERIOD_US, Math.ceil(START_BURST_US / checked(cpu) / 1000) * 1000),
  )
  return over(cpu, period)
}

/**
 * Whether a container found at re-attach still has a start period: its earlier process stopped
 * before `tightenCpu`. One created before this limit (with `NanoCpus`) is left as it is.
 */
export function stillStarting(host: Docker.HostConfig, running: boolean): boolean {
  const period = host.CpuPeriod ?? 0
  return running && !host.NanoCpus && period > 0 && period !== RUNNING_PERIOD_US
}

/**
 * Right after the start: sets the running limit when the container was created with a longer
 * period. Never throws: should the engine refuse, the start limit (the same share) stays.
 */
export async function tightenCpu(container: Docker.Container, cpu: number, log: Logger): Promise<void> {
  const running = runningCpuLimit(cpu)
  if (startCpuLimit(cpu).CpuPeriod === running.CpuPeriod) return
  try {
    await container.update(running)
  } catch (err) {
    if (dockerStatus(err) === 404) {
      // Gone already (a short job): nothing left to tighten. But an engine without the update
      // endpoint (podman's Docker API) answers 404 for a container that is there: say so.
      if (!(await stillThere(container))) return
      log.warn(
        { err: dockerMessage(err), containerId: container.id },
        'the engine has no container update (404 for a container it holds): the start period stays (the same share)',
      )
      return
    }
    log.warn(
      { err: dockerMessage(err), containerId: container.id },
      'could not set the running CPU period: the start period stays (the same share)',
    )
  }
}

/** Whether the engine still holds `container` (any answer but its inspect is taken as gone). */
async function stillThere(container: Docker.Container): Promise<boolean> {
  try {
    await container.inspect()
    return true
  } catch {
    return false
  }
}
