/**
 * Runs and re-attaches a pod (specs/executor.md, "Pods"): one container per member, created,
 * attached and started together, all in the allocation's one quota mount with the shared folder at
 * /pod; each supervised as a single container is (supervise.ts). When a member ends without
 * completing, the others are stopped; the allocation ends when every member has ended.
 */
import { basename } from 'node:path'
import type Docker from 'dockerode'
import type { Clock } from '../../../actors/clock.js'
import type { Logger } from 'pino'
import { AllocationNotFoundError, ImageNotFoundError, AllocationBusyError } from '../errors.js'
import type {
  ExecutionEvent,
  ExecutionResult,
  ExecutionSpec,
  RunOptions,
  WorkloadMember,
} from '../executor.js'
import { notStarted } from '../outputs.js'
import { createOptions, imageOfMember, type ContainerSettings } from './container-config.js'
import { dockerMessage, dockerStatus } from './docker-errors.js'
import { classifyExit, parseDockerTime } from '../common/outcome.js'
import { stillStarting, tightenCpu } from './cpu-limit.js'
import { podResult, type MemberEnd } from './pod-result.js'
import { supervise, type OutputStream, type Supervised } from './supervise.js'
import type { WorkDirs } from '../common/work-dirs.js'

export interface PodDeps {
  docker: Docker
  log: Logger
  clock: Clock
  dirs: WorkDirs
  settings: Omit<ContainerSettings, 'outputsDir' | 'member' | 'podDir'>
  statsIntervalMs: number
  limits: { maxBytes: number; maxFiles: number }
  emit: (event: ExecutionEvent) => void
  /** One engine call, with "nobody answers" made an ExecutorUnavailableError. */
  engine: <T>(call: () => Promise<T>) => Promise<T>
}

/** A member's container, attached, not yet (or already) started. */
interface Attached {
  member: WorkloadMember
  container: Docker.Container
  stream: OutputStream
}

/** Runs a pod whose images are local, to the end; always removes its containers and folders. */
export async function runPod(
  deps: PodDeps,
  spec: ExecutionSpec,
  members: WorkloadMember[],
  options: RunOptions,
): Promise<ExecutionResult> {
  const aborted = (): boolean => options.signal?.aborted === true
  if (aborted()) return notStarted('cancelled', -1, 'cancelled before start')
  await deps.dirs.claim(spec.allocationId)
  const containers: Docker.Container[] = []
  const attached: Attached[] = []
  const tightened: Array<Promise<void>> = [] // each member's running CPU period (cpu-limit.ts)
  try {
    const dirs = await deps.dirs.preparePod(
      spec,
      members.map((m) => m.name),
    )
    for (const member of members) {
      const container = await create(deps, spec, member, dirs.members.get(member.name) ?? '', dirs.pod)
      containers.push(container)
      deps.emit({ type: 'created', handle: container.id, member: member.name })
      // Attach before start, so not a byte of output is missed.
      const stream = (await container.attach({ stream: true, stdout: true, stderr: true })) as OutputStream
      attached.push({ member, container, stream })
    }
    // Created and attached while the start note is on its way: started only once it is recorded
    // (a refusal rejects `run`; the containers and folders go in the cleanup below).
    if (options.startAfter !== undefined) await options.startAfter
    if (aborted()) return notStarted('cancelled', -1, 'cancelled before start')
    for (const a of attached) {
      try {
        await a.container.start()
      } catch (err) {
        deps.log.info({ err: dockerMessage(err), member: a.member.name }, 'pod member did not start')
        return notStarted('failed', 127, `member ${a.member.name} cannot start: ${dockerMessage(err)}`)
      }
      tightened.push(tightenCpu(a.container, a.member.resources.cpu, deps.log))
      deps.emit({ type: 'started', member: a.member.name })
    }
    const startedAt = deps.clock.now()
    const ends = await superviseAll(
      deps,
      spec,
      attached.map((a) => ({ ...a, startedAt })),
      options,
    )
    return await finish(deps, spec, ends)
  } finally {
    for (const a of attached) a.stream.destroy?.()
    await Promise.all(tightened) // never reject; settled before the containers go
    // A member started before another failed to start is killed here with the rest.
    await removeAll(containers, deps.log)
    await deps.dirs.release(spec.allocationId, deps.log)
  }
}

/**
 * Takes over the pod an earlier process started (its containers found by their labels). Members
 * whose container never started, or is gone, fail ("lost"), which stops the others; when no member
 * ever started, the pod is cleaned up and AllocationNotFoundError lets `run` start it afresh.
 */
export async function reattachPod(
  deps: PodDeps,
  spec: ExecutionSpec,
  members: WorkloadMember[],
  options: RunOptions,
): Promise<ExecutionResult> {
  const found = await podContainers(deps, spec.allocationId)
  const containers = [...found.values()]
  try {
    const inspected = new Map<string, Docker.ContainerInspectInfo>()
    for (const [name, c] of found) {
      try {
        inspected.set(name, await deps.engine(() => c.inspect()))
      } catch (err) {
        if (dockerStatus(err) !== 404) throw err
      }
    }
    const started = [...inspected.values()].filter((i) => i.State.Status !== 'created')
    if (started.length === 0) throw new AllocationNotFoundError(spec.allocationId)
    const watched: Array<Attached & { startedAt: number }> = []
    const lost: MemberEnd[] = []
    for (const member of members) {
      const info = inspected.get(member.name)
      const container = found.get(member.name)
      if (info === undefined || container === undefined || info.State.Status === 'created') {
        lost.push({ name: member.name, lost: 'not started before the provider restarted' })
        continue
      }
      deps.emit({
        type: 'reattached',
        handle: info.Id,
        running: info.State.Running,
        member: member.name,
      })
      const stream = (await container.logs({
        follow: true,
        stdout: true,
        stderr: true,
      })) as unknown as OutputStream
      if (stillStarting(info.HostConfig, info.State.Running))
        await tightenCpu(container, member.resources.cpu, deps.log)
      const startedAt = parseDockerTime(info.State.StartedAt) ?? deps.clock.now()
      watched.push({ member, container, stream, startedAt })
    }
    deps.log.info({ members: watched.length, lost: lost.length }, 're-attached to the pod')
    const ends = await superviseAll(deps, spec, watched, options, lost.length > 0)
    const all = members.map(
      (m) =>
        ends.find((e) => e.name === m.name) ??
        lost.find((e) => e.name === m.name) ?? { name: m.name, lost: 'lost' },
    )
    return await finish(deps, spec, all)
  } finally {
    await removeAll(containers, deps.log)
    await deps.dirs.release(spec.allocationId, deps.log)
  }
}

/** The containers of a pod's allocation, by member, from their labels. */
export async function podContainers(
  deps: PodDeps,
  allocationId: string,
): Promise<Map<string, Docker.Container>> {
  const p = deps.settings.labelPrefix
  const list = await deps.engine(() =>
    deps.docker.listContainers({
      all: true,
      filters: { label: [`${p}.allocation=${allocationId}`, `${p}.owner=${deps.settings.owner}`] },
    }),
  )
  const byMember = new Map<string, Docker.Container>()
  for (const c of list) {
    const member = c.Labels[`${p}.member`]
    if (member !== undefined) byMember.set(member, deps.docker.getContainer(c.Id))
  }
  return byMember
}

/**
 * Supervises every member at once; the first member that ends without completing stops the
 * others (so does `stopAtOnce`: a member was lost). Resolves when all have ended.
 */
async function superviseAll(
  deps: PodDeps,
  spec: ExecutionSpec,
  members: Array<Attached & { startedAt: number }>,
  options: RunOptions,
  stopAtOnce = false,
): Promise<MemberEnd[]> {
  const running: Supervised[] = []
  const stopOthers = (): void => running.forEach((s) => s.stop('pod'))
  const ends = members.map(async ({ member, container, stream, startedAt }): Promise<MemberEnd> => {
    const log = deps.log.child({ member: member.name })
    const s = supervise(container, {
      clock: deps.clock,
      log,
      maxLogBytes: deps.settings.maxLogBytes,
      statsIntervalMs: deps.statsIntervalMs,
      timeoutSeconds: spec.timeoutSeconds,
      startedAt,
      stream,
      emit: (event) => deps.emit({ ...event, member: member.name } as ExecutionEvent),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    })
    running.push(s)
    const ended = await s.ended
    if (classifyExit({ ...ended, timeoutSeconds: spec.timeoutSeconds }).status !== 'completed') stopOthers()
    return { name: member.name, ended }
  })
  if (stopAtOnce) stopOthers()
  return await Promise.all(ends)
}

async function finish(deps: PodDeps, spec: ExecutionSpec, ends: MemberEnd[]): Promise<ExecutionResult> {
  const result = await podResult({
    members: ends,
    // The shared folder is scratch, never an output; it goes with the work folder.
    scratch: basename(deps.dirs.scratchOf(spec.allocationId)),
    timeoutSeconds: spec.timeoutSeconds,
    outputsDir: deps.dirs.outputsOf(spec.allocationId),
    archiveFile: await deps.dirs.freshArchive(spec.allocationId),
    quotaBytes: deps.dirs.quotaOf(spec),
    limits: deps.limits,
  })
  const { status, exitCode, reason, usage } = result
  deps.log.info({ status, exitCode, reason, wallSeconds: usage.wallSeconds }, 'pod finished')
  return result
}

async function create(
  deps: PodDeps,
  spec: ExecutionSpec,
  member: WorkloadMember,
  outputsDir: string,
  podDir: string,
): Promise<Docker.Container> {
  const opts = createOptions(spec, member, {
    ...deps.settings,
    outputsDir,
    member: member.name,
    podDir,
  })
  try {
    return await deps.engine(() => deps.docker.createContainer(opts))
  } catch (err) {
    if (dockerStatus(err) === 404) throw new ImageNotFoundError(imageOfMember(member))
    if (dockerStatus(err) === 409) {
      throw new AllocationBusyError(
        spec.allocationId,
        `container ${opts.name} already exists (if no dms is running it: docker rm -f ${opts.name})`,
      )
    }
    throw err
  }
}

async function removeAll(containers: Docker.Container[], log: Logger): Promise<void> {
  await Promise.all(
    containers.map(async (c) => {
      try {
        await c.remove({ force: true, v: true })
      } catch (err) {
        if (dockerStatus(err) === 404) return
        log.warn({ err: dockerMessage(err), containerId: c.id }, 'could not remove the container')
      }
    }),
  )
}
