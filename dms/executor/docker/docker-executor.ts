import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type Docker from 'dockerode'
import type { Logger } from 'pino'
import {
  AllocationBusyError,
  AllocationNotFoundError,
  ImageNotFoundError,
  InvalidSpecError,
} from '../errors.js'
import type { AllocationId, ExecutionEvent, ExecutionResult, ExecutionSpec, RunOptions } from '../executor.js'
import type { ArtifactRef, Engine, EngineCapabilities, EngineRun } from '../engine.js'
import { stillStarting, tightenCpu } from './cpu-limit.js'
import { EngineSelfCheckError, selfCheck } from './self-check.js'
import { LOG_DRIVERS, ulimitsProblem, type LogDriver, type Ulimit } from './engine-profile.js'
import {
  ALLOCATION_ID,
  checkImage,
  containerName,
  createOptions,
  imageOfMember,
  validateSpec,
} from './container-config.js'
import { dockerMessage, dockerStatus, engineCall } from './docker-errors.js'
import type { DockerExecutorComponents, DockerExecutorInit } from './docker-options.js'
import { hasLocalImage, pullImage } from './engine-images.js'
import { Dockerode } from './dockerode.js'
import { guardedModem } from './guarded-modem.js'
import { notStarted } from '../outputs.js'
import { parseDockerTime } from '../common/outcome.js'
import { runResult } from '../common/run-result.js'
import { WorkDirs } from '../common/work-dirs.js'
import { supervise, type OutputStream } from './supervise.js'
import { validatePod } from './pod-config.js'
import { podContainers, reattachPod, runPod, type PodDeps } from './pod-run.js'
import { systemClock, type Clock } from '../../../actors/clock.js'
import { isPod } from '../../workload/workload.js'

export type { DockerExecutorComponents, DockerExecutorInit } from './docker-options.js'

function safeEmit(options: RunOptions, event: ExecutionEvent, log: Logger): void {
  try {
    options.onEvent?.(event)
  } catch (err) {
    log.warn({ err }, 'onEvent listener threw')
  }
}

/**
 * Runs each allocation in its own hardened Docker container (see `createOptions`) and always
 * removes it afterwards. A run that never started (cancelled before start) reports exit code -1; a
 * program that cannot be started reports 127.
 */
export class DockerExecutor implements Engine {
  private readonly docker: Docker
  private readonly log: Logger
  private readonly clock: Clock
  private readonly dirs: WorkDirs
  private readonly user: string
  private readonly maxLogBytes: number
  private readonly maxOutputBytes: number
  private readonly maxOutputFiles: number
  private readonly labelPrefix: string
  private readonly statsIntervalMs: number
  private readonly diskQuota: boolean
  private readonly pullImages: boolean
  private readonly owner: string
  private readonly logDriver: LogDriver
  private readonly ulimits: readonly Ulimit[]
  private readonly active = new Set<AllocationId>()
  private readonly workDir: string
  /** The engine self-check, once it passed or the engine refused (self-check.ts). */
  private checked: Promise<void> | undefined

  constructor(components: DockerExecutorComponents, init: DockerExecutorInit) {
    // A modem that never follows the engine's redirects off the socket (guarded-modem.ts).
    this.docker = new Dockerode({
      modem: guardedModem({ socketPath: init.socketPath }),
    } as Docker.DockerOptions)
    this.log = components.log.child({ c: 'dms:executor:docker' })
    this.clock = components.clock ?? systemClock
    this.user = init.user ?? '65534:65534'
    if (/^(0|root)(:|$)/.test(this.user)) throw new Error('DockerExecutor user must not be root')
    this.maxLogBytes = init.maxLogBytes ?? 1024 * 1024
    this.maxOutputBytes = init.maxOutputBytes ?? 16 * 1024 * 1024
    this.maxOutputFiles = init.maxOutputFiles ?? 10_000
    this.labelPrefix = init.labelPrefix ?? 'dms'
    this.statsIntervalMs = init.statsIntervalMs ?? 500
    this.diskQuota = init.diskQuota ?? process.getuid?.() === 0
    this.dirs = new WorkDirs({
      workDir: init.workDir,
      archiveDir: init.archiveDir ?? join(init.workDir, 'archives'),
      user: this.user,
      diskQuota: this.diskQuota,
    })
    this.workDir = init.workDir
    this.pullImages = init.pullImages ?? false
    this.owner = init.owner ?? 'local'
    this.logDriver = init.logDriver ?? 'local'
    if (!(LOG_DRIVERS as readonly string[]).includes(this.logDriver)) {
      throw new Error(`DockerExecutor logDriver must be one of ${LOG_DRIVERS.join(', ')}`)
    }
    this.ulimits = init.ulimits ?? []
    const ulimits = ulimitsProblem(this.ulimits)
    if (ulimits !== undefined) throw new Error(`DockerExecutor ulimits: ${ulimits}`)
    if (!this.diskQuota) {
      this.log.warn(
        'disk quotas are off (not root, or docker.diskQuota is false): a job can fill the host disk ' +
          'through /outputs; only maxOutputBytes is checked, after the run (specs/executor.md)',
      )
    }
  }

  /** Docker's abilities; unavailable (with the engine's error) when nothing answers on the socket. */
  async capabilities(): Promise<EngineCapabilities> {
    const can = {
      name: 'docker',
      artifactKinds: ['image' as const],
      gpus: true,
      networkPolicies: ['none' as const, 'open' as const],
      diskQuota: this.diskQuota,
      fetchesArtifacts: this.pullImages,
    }
    try {
      const version = await this.engine(() => this.docker.version())
      const refused = await this.selfCheck()
      if (refused !== undefined) return { ...can, available: false, version: version.Version, why: refused }
      return { ...can, available: true, version: version.Version }
    } catch (err) {
      return { ...can, available: false, why: err instanceof Error ? err.message : String(err) }
    }
  }

  /**
   * Why the engine cannot run a hardened container (self-check.ts), or undefined when it can.
   * Checked once: a refusal stands until the provider restarts (its config or engine changed);
   * an engine that did not answer is asked again next time (rejects).
   */
  private async selfCheck(): Promise<string | undefined> {
    this.checked ??= this.engine(() =>
      selfCheck(
        this.docker,
        {
          user: this.user,
          labelPrefix: this.labelPrefix,
          owner: this.owner,
          maxLogBytes: this.maxLogBytes,
          logDriver: this.logDriver,
          ulimits: this.ulimits,
        },
        join(this.workDir, 'self-check'),
      ),
    ).then(
      () => undefined,
      (err: unknown) => {
        if (err instanceof EngineSelfCheckError) {
          this.log.error({ why: err.message }, 'the engine failed its self-check: declining every job')
        }
        throw err
      },
    )
    try {
      await this.checked
      return undefined
    } catch (err) {
      if (err instanceof EngineSelfCheckError) return err.message
      this.checked = undefined
      throw err
    }
  }

  /** Whether the image exists in the local engine. */
  async hasImage(image: string): Promise<boolean> {
    checkImage(image)
    return await this.engine(() => hasLocalImage(this.docker, image))
  }

  /** An image is local, or pulling is on; Docker runs no other kind. */
  async hasArtifact(artifact: ArtifactRef): Promise<boolean> {
    if (artifact.kind !== 'image') return false
    checkImage(artifact.ref)
    return this.pullImages || (await this.hasImage(artifact.ref))
  }

  async run(spec: ExecutionSpec, options: RunOptions = {}): Promise<ExecutionResult> {
    validateSpec(spec)
    // A workload of one member is one container, its outputs at the archive's root (as every
    // container of earlier releases, so a restarted provider still re-attaches to them).
    const members = isPod(spec.workload) ? validatePod(spec) : undefined
    options.startAfter?.catch(() => {}) // awaited before the start; not unhandled if we fail sooner
    return this.exclusively(spec.allocationId, async () => {
      const emit = (e: ExecutionEvent): void => safeEmit(options, e, this.log)
      for (const image of new Set(spec.workload.members.map(imageOfMember)))
        await this.ensureImage(image, emit)
      if (members !== undefined) return await runPod(this.podDeps(spec, options), spec, members, options)
      return await this.runInWorkDir(spec, options)
    })
  }

  async reattach(spec: ExecutionSpec, options: RunOptions = {}): Promise<ExecutionResult> {
    validateSpec(spec)
    const members = isPod(spec.workload) ? validatePod(spec) : undefined
    return this.exclusively(spec.allocationId, async () => {
      if (members !== undefined) return await reattachPod(this.podDeps(spec, options), spec, members, options)
      const log = this.log.child({ jobId: spec.jobId, allocationId: spec.allocationId })
      const container = this.docker.getContainer(containerName(this.labelPrefix, spec))
      let inspected: Docker.ContainerInspectInfo
      try {
        inspected = await this.engine(() => container.inspect())
      } catch (err) {
        if (dockerStatus(err) === 404) throw new AllocationNotFoundError(spec.allocationId)
        throw err
      }
      const state = inspected.State
      if (state.Status === 'created') {
        // Created but never started: nothing ran, so nothing to take over. `run` starts afresh.
        await this.cleanup(spec.allocationId, container, log)
        throw new AllocationNotFoundError(spec.allocationId)
      }
      try {
        safeEmit(options, { type: 'reattached', handle: inspected.Id, running: state.Running }, log)
        // The engine's copy of the output, from the start, then live while the container runs.
        const stream = (await container.logs({
          follow: true,
          stdout: true,
          stderr: true,
        })) as unknown as NodeJS.ReadableStream & Partial<{ destroy: () => void }>
        const startedAt = parseDockerTime(state.StartedAt) ?? this.clock.now()
        if (stillStarting(inspected.HostConfig, state.Running))
          await tightenCpu(container, spec.workload.members[0].resources.cpu, log)
        log.info({ running: state.Running }, 're-attached to the container')
        return await this.supervise(
          container,
          spec,
          this.dirs.outputsOf(spec.allocationId),
          options,
          log,
          stream,
          startedAt,
        )
      } finally {
        await this.cleanup(spec.allocationId, container, log)
      }
    })
  }

  async listRuns(): Promise<EngineRun[]> {
    const p = this.labelPrefix
    const list = await this.engine(() =>
      this.docker.listContainers({
        all: true,
        filters: { label: [`${p}.managed=true`, `${p}.owner=${this.owner}`] },
      }),
    )
    return list.map((c) => ({
      allocationId: c.Labels[`${p}.allocation`] ?? '',
      jobId: c.Labels[`${p}.job`] ?? '',
      handle: c.Id,
      running: c.State === 'running',
      ...(c.Labels[`${p}.member`] !== undefined ? { member: c.Labels[`${p}.member`] } : {}),
    }))
  }

  async removeAllocation(allocationId: AllocationId): Promise<void> {
    if (!ALLOCATION_ID.test(allocationId)) throw new InvalidSpecError('allocationId', 'is not a valid id')
    await this.exclusively(allocationId, async () => {
      const log = this.log.child({ allocationId })
      // A pod's members first (found by their labels), then the single container and the folder.
      const members = await podContainers(this.podDeps(undefined, {}), allocationId)
      await Promise.all([...members.values()].map((c) => this.remove(c, log)))
      const container = this.docker.getContainer(`${this.labelPrefix}-${allocationId}`)
      await this.cleanup(allocationId, container, log)
      await fs.rm(this.dirs.archiveOf(allocationId), { force: true })
    })
  }

  /** What a pod's run needs of this executor. */
  private podDeps(spec: ExecutionSpec | undefined, options: RunOptions): PodDeps {
    const log =
      spec === undefined ? this.log : this.log.child({ jobId: spec.jobId, allocationId: spec.allocationId })
    return {
      docker: this.docker,
      log,
      clock: this.clock,
      dirs: this.dirs,
      settings: {
        user: this.user,
        labelPrefix: this.labelPrefix,
        owner: this.owner,
        maxLogBytes: this.maxLogBytes,
        logDriver: this.logDriver,
        ulimits: this.ulimits,
      },
      statsIntervalMs: this.statsIntervalMs,
      limits: { maxBytes: this.maxOutputBytes, maxFiles: this.maxOutputFiles },
      emit: (e) => safeEmit(options, e, log),
      engine: (call) => this.engine(call),
    }
  }

  /** One operation at a time per allocation in this process. */
  private async exclusively<T>(allocationId: AllocationId, fn: () => Promise<T>): Promise<T> {
    if (this.active.has(allocationId)) {
      throw new AllocationBusyError(allocationId, 'it is already running in this process')
    }
    this.active.add(allocationId)
    try {
      return await fn()
    } finally {
      this.active.delete(allocationId)
    }
  }

  /** Pulls a missing image when pulling is on; else the create's 404 says it is missing (no look-up). */
  private async ensureImage(image: string, emit: (e: ExecutionEvent) => void): Promise<void> {
    if (!this.pullImages || (await this.hasImage(image))) return
    await pullImage(this.docker, image, emit, (call) => this.engine(call))
  }

  private async runInWorkDir(spec: ExecutionSpec, options: RunOptions): Promise<ExecutionResult> {
    const log = this.log.child({ jobId: spec.jobId, allocationId: spec.allocationId })
    if (options.signal?.aborted === true) return notStarted('cancelled', -1, 'cancelled before start')
    await this.dirs.claim(spec.allocationId)
    let container: Docker.Container | undefined
    try {
      const outputs = await this.dirs.makeOutputs(spec.allocationId)
      // The engine creates the container while the quota is mounted: it binds /outputs at start.
      const [created, limited] = await Promise.allSettled([
        this.create(spec, outputs),
        this.dirs.limitOutputs(spec),
      ])
      if (created.status === 'rejected') throw created.reason
      container = created.value
      if (limited.status === 'rejected') throw limited.reason
      return await this.runContainer(container, spec, outputs, options, log)
    } finally {
      await this.cleanup(spec.allocationId, container, log)
    }
  }

  /** Removes the container (if any), the disk quota and the work folder; logs what it could not. */
  private async cleanup(
    allocationId: AllocationId,
    container: Docker.Container | undefined,
    log: Logger,
  ): Promise<void> {
    if (container !== undefined) await this.remove(container, log)
    await this.dirs.release(allocationId, log)
  }

  private async runContainer(
    container: Docker.Container,
    spec: ExecutionSpec,
    outputsDir: string,
    options: RunOptions,
    log: Logger,
  ): Promise<ExecutionResult> {
    safeEmit(options, { type: 'created', handle: container.id }, log)
    // Attach before start, so not a byte of output is missed.
    const stream = (await container.attach({
      stream: true,
      stdout: true,
      stderr: true,
    })) as NodeJS.ReadableStream & Partial<{ destroy: () => void }>
    // Created and attached while the start note is on its way: started only once it is recorded.
    try {
      await options.startAfter
    } catch (err) {
      stream.destroy?.()
      throw err // the container and the quota go in runInWorkDir's cleanup
    }
    if (options.signal?.aborted === true) {
      stream.destroy?.()
      return notStarted('cancelled', -1, 'cancelled before start')
    }
    try {
      await container.start()
    } catch (err) {
      stream.destroy?.()
      log.info({ err: dockerMessage(err) }, 'container did not start')
      return notStarted('failed', 127, `cannot start: ${dockerMessage(err)}`)
    }
    const startedAt = this.clock.now()
    const tightened = tightenCpu(container, spec.workload.members[0].resources.cpu, log) // the 100 ms period (cpu-limit.ts)
    safeEmit(options, { type: 'started' }, log)
    log.debug({ containerId: container.id }, 'container started')
    const result = this.supervise(container, spec, outputsDir, options, log, stream, startedAt)
    return await result.finally(() => tightened) // never rejects; settled before the removal
  }

  /**
   * Watches a started container to its end (supervise.ts), then classifies the exit and collects
   * /outputs.
   */
  private async supervise(
    container: Docker.Container,
    spec: ExecutionSpec,
    outputsDir: string,
    options: RunOptions,
    log: Logger,
    stream: OutputStream,
    startedAt: number,
  ): Promise<ExecutionResult> {
    const ended = await supervise(container, {
      clock: this.clock,
      log,
      maxLogBytes: this.maxLogBytes,
      statsIntervalMs: this.statsIntervalMs,
      timeoutSeconds: spec.timeoutSeconds,
      startedAt,
      stream,
      emit: (event) => safeEmit(options, event, log),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    }).ended
    const archiveFile = await this.dirs.freshArchive(spec.allocationId)
    const result = await runResult({
      ...ended,
      timeoutSeconds: spec.timeoutSeconds,
      outputsDir,
      archiveFile,
      quotaBytes: this.dirs.quotaOf(spec),
      limits: { maxBytes: this.maxOutputBytes, maxFiles: this.maxOutputFiles },
    })
    const { status, exitCode, reason, usage } = result
    log.info(
      { status, exitCode, reason, wallSeconds: usage.wallSeconds, skipped: result.outputsSkipped },
      'run finished',
    )
    return result
  }

  private async create(spec: ExecutionSpec, outputsDir: string): Promise<Docker.Container> {
    const member = spec.workload.members[0]
    const opts = createOptions(spec, member, {
      user: this.user,
      labelPrefix: this.labelPrefix,
      owner: this.owner,
      outputsDir,
      maxLogBytes: this.maxLogBytes,
      logDriver: this.logDriver,
      ulimits: this.ulimits,
    })
    try {
      return await this.engine(() => this.docker.createContainer(opts))
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

  private async remove(container: Docker.Container, log: Logger): Promise<void> {
    try {
      await container.remove({ force: true, v: true })
    } catch (err) {
      if (dockerStatus(err) === 404) return
      log.warn({ err: dockerMessage(err), containerId: container.id }, 'could not remove the container')
    }
  }

  /** Runs one engine call, turning "nobody answers on the socket" into ExecutorUnavailableError. */
  private engine<T>(call: () => Promise<T>): Promise<T> {
    return engineCall(call)
  }
}
