import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import Docker from 'dockerode'
import { child, type Logger } from '../../log.js'
import { AllocationBusyError, ExecutorUnavailableError, ImageNotFoundError } from '../errors.js'
import type {
  AllocationId,
  ExecutionEvent,
  ExecutionResult,
  ExecutionSpec,
  Executor,
  RunOptions,
} from '../executor.js'
import { hashOutputs } from '../outputs.js'
import { collectOutputs } from './collect-outputs.js'
import { createOptions, validateSpec } from './container-config.js'
import { dockerMessage, dockerStatus, isEngineUnreachable } from './docker-errors.js'
import { LogCapture } from './log-capture.js'
import { notStarted } from '../outputs.js'
import { classifyExit, wallSeconds, type StopReason } from './outcome.js'
import { StatsSampler } from './stats-sampler.js'

export interface DockerExecutorComponents {
  log: Logger
}

export interface DockerExecutorInit {
  /** The engine's socket. @default DOCKER_HOST, else /var/run/docker.sock (dockerode's defaults) */
  socketPath?: string
  /** Host folder holding one sub-folder per running allocation (its /outputs); created if missing. */
  workDir: string
  /** `uid:gid` the workload runs as; never root. @default '65534:65534' (nobody) */
  user?: string
  /** Cap on the bytes kept of each of stdout and stderr. @default 1 MiB */
  maxLogBytes?: number
  /** Cap on the total bytes of collected output files. @default 16 MiB */
  maxOutputBytes?: number
  /** Cap on the number of collected output files. @default 10000 */
  maxOutputFiles?: number
  /** Prefix of the container labels (`<prefix>.job`, ...) and name (`<prefix>-<allocationId>`). @default 'dms' */
  labelPrefix?: string
  /** How often resource usage is sampled while the container runs. @default 500 */
  statsIntervalMs?: number
}

/** How long to wait for the output stream to drain once the container has exited. */
const STREAM_DRAIN_MS = 2000

/**
 * Runs each allocation in its own hardened Docker container (see `createOptions`) and always
 * removes it afterwards. A run that never started (cancelled before start) reports exit code -1; a
 * program that cannot be started reports 127.
 */
export class DockerExecutor implements Executor {
  private readonly docker: Docker
  private readonly log: Logger
  private readonly workDir: string
  private readonly user: string
  private readonly maxLogBytes: number
  private readonly maxOutputBytes: number
  private readonly maxOutputFiles: number
  private readonly labelPrefix: string
  private readonly statsIntervalMs: number
  private readonly active = new Set<AllocationId>()

  constructor(components: DockerExecutorComponents, init: DockerExecutorInit) {
    this.docker = new Docker(init.socketPath !== undefined ? { socketPath: init.socketPath } : undefined)
    this.log = child(components.log, 'dms:executor:docker')
    this.workDir = init.workDir
    this.user = init.user ?? '65534:65534'
    if (/^(0|root)(:|$)/.test(this.user)) throw new Error('DockerExecutor user must not be root')
    this.maxLogBytes = init.maxLogBytes ?? 1024 * 1024
    this.maxOutputBytes = init.maxOutputBytes ?? 16 * 1024 * 1024
    this.maxOutputFiles = init.maxOutputFiles ?? 10_000
    this.labelPrefix = init.labelPrefix ?? 'dms'
    this.statsIntervalMs = init.statsIntervalMs ?? 500
  }

  async info(): Promise<{ name: string; version: string }> {
    const version = await this.engine(() => this.docker.version())
    return { name: 'docker', version: version.Version }
  }

  async hasImage(image: string): Promise<boolean> {
    try {
      await this.engine(() => this.docker.getImage(image).inspect())
      return true
    } catch (err) {
      if (dockerStatus(err) === 404) return false
      throw err
    }
  }

  async run(spec: ExecutionSpec, options: RunOptions = {}): Promise<ExecutionResult> {
    validateSpec(spec)
    if (this.active.has(spec.allocationId)) {
      throw new AllocationBusyError(spec.allocationId, 'it is already running in this process')
    }
    this.active.add(spec.allocationId)
    try {
      if (!(await this.hasImage(spec.image))) throw new ImageNotFoundError(spec.image)
      return await this.runInWorkDir(spec, options)
    } finally {
      this.active.delete(spec.allocationId)
    }
  }

  private async runInWorkDir(spec: ExecutionSpec, options: RunOptions): Promise<ExecutionResult> {
    const log = this.log.child({ jobId: spec.jobId, allocationId: spec.allocationId })
    if (options.signal?.aborted === true) return notStarted('cancelled', -1, 'cancelled before start')
    const allocDir = join(this.workDir, spec.allocationId)
    await fs.mkdir(this.workDir, { recursive: true })
    try {
      await fs.mkdir(allocDir) // not recursive: an existing folder belongs to another run
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      throw new AllocationBusyError(
        spec.allocationId,
        `its work folder ${allocDir} exists (another run, or one left by a crash: remove it if no dms is running it)`,
      )
    }
    let container: Docker.Container | undefined
    try {
      const outputsDir = join(allocDir, 'outputs')
      await this.prepareOutputsDir(outputsDir)
      container = await this.create(spec, outputsDir)
      return await this.runContainer(container, spec, outputsDir, options, log)
    } finally {
      if (container !== undefined) await this.remove(container, log)
      await fs.rm(allocDir, { recursive: true, force: true }).catch((err: unknown) => {
        log.warn({ err, allocDir }, 'could not remove the work folder')
      })
    }
  }

  private async runContainer(
    container: Docker.Container,
    spec: ExecutionSpec,
    outputsDir: string,
    options: RunOptions,
    log: Logger,
  ): Promise<ExecutionResult> {
    const emit = (event: ExecutionEvent): void => {
      try {
        options.onEvent?.(event)
      } catch (err) {
        log.warn({ err }, 'onEvent listener threw')
      }
    }
    emit({ type: 'created', containerId: container.id })
    const stdout = new LogCapture(this.maxLogBytes, (chunk) => emit({ type: 'log', stream: 'stdout', chunk }))
    const stderr = new LogCapture(this.maxLogBytes, (chunk) => emit({ type: 'log', stream: 'stderr', chunk }))
    // Attach before start, so not a byte of output is missed.
    const stream = (await container.attach({
      stream: true,
      stdout: true,
      stderr: true,
    })) as NodeJS.ReadableStream & Partial<{ destroy: () => void }>
    const drained = new Promise<void>((resolve) => {
      stream.once('end', resolve)
      stream.once('close', resolve)
      stream.once('error', () => resolve())
    })
    this.docker.modem.demuxStream(stream, stdout, stderr)

    let requested: StopReason | undefined
    let started = false
    let killed: Promise<boolean> = Promise.resolve(false)
    const stop = (reason: StopReason): void => {
      if (requested !== undefined) return
      requested = reason
      if (started) killed = this.kill(container, log)
    }
    const onAbort = (): void => stop('cancelled')
    options.signal?.addEventListener('abort', onAbort, { once: true })
    if (options.signal?.aborted === true) stop('cancelled')
    const sampler = new StatsSampler(container, log, this.statsIntervalMs)
    let timer: NodeJS.Timeout | undefined
    try {
      if (requested !== undefined) return notStarted('cancelled', -1, 'cancelled before start')
      try {
        await container.start()
      } catch (err) {
        log.info({ err: dockerMessage(err) }, 'container did not start')
        return notStarted('failed', 127, `cannot start: ${dockerMessage(err)}`)
      }
      const startedAt = performance.now()
      started = true
      emit({ type: 'started' })
      log.debug({ containerId: container.id }, 'container started')
      sampler.start()
      timer = setTimeout(() => stop('timed_out'), spec.timeoutSeconds * 1000)
      if (requested !== undefined) killed = this.kill(container, log) // aborted while starting

      const { StatusCode: exitCode } = (await container.wait()) as { StatusCode: number }
      const measuredWall = (performance.now() - startedAt) / 1000
      clearTimeout(timer)
      const sampled = sampler.stop()
      await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, STREAM_DRAIN_MS).unref())])
      stdout.flushText()
      stderr.flushText()
      const wasKilled = await killed
      const state = (await container.inspect()).State
      emit({ type: 'exited', exitCode })

      let { status, reason } = classifyExit({
        stopRequested: requested,
        killed: wasKilled,
        oomKilled: state.OOMKilled,
        exitCode,
        timeoutSeconds: spec.timeoutSeconds,
      })
      const collected = await collectOutputs(outputsDir, {
        maxBytes: this.maxOutputBytes,
        maxFiles: this.maxOutputFiles,
      })
      if (!collected.ok && status === 'completed') {
        status = 'failed'
        reason = collected.reason
      }
      const wall = wallSeconds(state, measuredWall)
      log.info({ status, exitCode, reason, wallSeconds: wall }, 'run finished')
      return {
        status,
        exitCode,
        ...(reason !== undefined ? { reason } : {}),
        stdout: stdout.text(),
        stderr: stderr.text(),
        truncated: stdout.truncated || stderr.truncated,
        outputs: collected.files,
        outputsHash: hashOutputs(collected.files),
        usage: {
          wallSeconds: wall,
          cpuSeconds: sampled.cpuSeconds,
          peakMemoryBytes: sampled.peakMemoryBytes,
        },
      }
    } finally {
      clearTimeout(timer)
      sampler.stop()
      options.signal?.removeEventListener('abort', onAbort)
      stream.destroy?.()
    }
  }

  /** The container's /outputs on the host, writable by the container's user. */
  private async prepareOutputsDir(dir: string): Promise<void> {
    await fs.mkdir(dir)
    const ids = /^(\d+)(?::(\d+))?$/.exec(this.user)
    if (process.getuid?.() === 0 && ids !== null) {
      const uid = Number(ids[1])
      await fs.chown(dir, uid, ids[2] !== undefined ? Number(ids[2]) : uid)
      await fs.chmod(dir, 0o755)
    } else {
      // Not root, or a user name we cannot resolve on the host: let anyone write.
      await fs.chmod(dir, 0o777)
    }
  }

  private async create(spec: ExecutionSpec, outputsDir: string): Promise<Docker.Container> {
    const opts = createOptions(spec, { user: this.user, labelPrefix: this.labelPrefix, outputsDir })
    try {
      return await this.engine(() => this.docker.createContainer(opts))
    } catch (err) {
      if (dockerStatus(err) === 404) throw new ImageNotFoundError(spec.image)
      if (dockerStatus(err) === 409) {
        throw new AllocationBusyError(
          spec.allocationId,
          `container ${opts.name} already exists (if no dms is running it: docker rm -f ${opts.name})`,
        )
      }
      throw err
    }
  }

  /** SIGKILL; false when the container was no longer running. */
  private async kill(container: Docker.Container, log: Logger): Promise<boolean> {
    try {
      await container.kill({ signal: 'SIGKILL' })
      return true
    } catch (err) {
      log.debug({ err: dockerMessage(err) }, 'kill: container not running')
      return false
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
  private async engine<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call()
    } catch (err) {
      if (isEngineUnreachable(err)) throw new ExecutorUnavailableError('docker', dockerMessage(err))
      throw err
    }
  }
}
