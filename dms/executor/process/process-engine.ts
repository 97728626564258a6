/**
 * The process engine (specs/executor.md, "The process engine"): runs a workload member as a
 * process tree in fresh pid, mount, network, ipc and uts namespaces on a root of read-only binds,
 * limited by a cgroup per allocation, through util-linux (sandbox-script.ts). For hosts without a
 * Docker engine. Its run is a detached runner writing its files into the allocation's folder, so
 * the run outlives the provider.
 */
import { spawn } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { DmsError } from '../../../actors/errors.js'
import { delay, systemClock, type Clock } from '../../../actors/clock.js'
import { workloadProblem } from '../../workload/check.js'
import { isPod } from '../../workload/workload.js'
import { ALLOCATION_ID } from '../docker/container-config.js'
import { LogCapture } from '../common/log-capture.js'
import type { StopReason } from '../common/outcome.js'
import { runResult } from '../common/run-result.js'
import { WorkDirs } from '../common/work-dirs.js'
import type { ArtifactRef, Engine, EngineCapabilities, EngineRun } from '../engine.js'
import { AllocationBusyError, AllocationNotFoundError, InvalidSpecError } from '../errors.js'
import type { AllocationId, ExecutionEvent, ExecutionResult, ExecutionSpec, RunOptions } from '../executor.js'
import { notStarted } from '../outputs.js'
import { Cgroup } from './cgroup.js'
import { gpuDeviceNodes, gpuEnv, hostGpus } from './gpu-devices.js'
import { pinnedGpus } from '../common/gpu-indices.js'
import { findNvidiaSmi, GpuMeter, nvidiaSmiQuery, PolledGpuMeter } from '../common/gpu-meter.js'
import { checkPrerequisites, SYSTEM_PATH, type Prerequisites } from './prerequisites.js'
import {
  DEFAULT_BINDS,
  DEFAULT_RUNTIMES,
  type ProcessEngineComponents,
  type ProcessEngineInit,
} from './process-options.js'
import { sandboxArgv } from './sandbox-script.js'

export type { ProcessEngineComponents, ProcessEngineInit } from './process-options.js'

/** This host cannot run the process engine (not root, a tool or a cgroup controller missing). */
export class SandboxUnavailableError extends DmsError {
  readonly peerMessage = 'no engine for this job on this provider: the run could not start'
  constructor(readonly why: string) {
    super('EXECUTOR_UNAVAILABLE', `the process engine cannot run here (${why})`)
  }
}

/** What a run leaves in its folder for a later engine object: who it is and when it started. */
interface RunRecord {
  v: 1
  jobId: string
  allocationId: string
  startedAt: number
}

const RUN = 'run'

export class ProcessEngine implements Engine {
  private readonly log: Logger
  private readonly clock: Clock
  private readonly dirs: WorkDirs
  private readonly uid: number
  private readonly gid: number
  private readonly runtimes: Set<string>
  private readonly binds: string[]
  private readonly cgroupParent: string
  private readonly cgroupRoot: string | undefined
  private readonly maxLogBytes: number
  private readonly maxOutputBytes: number
  private readonly maxOutputFiles: number
  private readonly pollMs: number
  private readonly diskQuota: boolean
  private readonly gpuDevDir: string
  private readonly active = new Set<AllocationId>()
  private prerequisites: Promise<Prerequisites> | undefined
  private nvidiaSmi: Promise<string | undefined> | undefined

  constructor(
    components: ProcessEngineComponents,
    private readonly init: ProcessEngineInit,
  ) {
    this.log = components.log.child({ c: 'dms:executor:process' })
    this.clock = components.clock ?? systemClock
    this.uid = init.uid ?? 65534
    this.gid = init.gid ?? 65534
    if (this.uid === 0 || this.gid === 0) throw new Error('ProcessEngine uid and gid must not be root')
    this.runtimes = new Set(init.runtimes ?? DEFAULT_RUNTIMES)
    this.binds = init.binds ?? DEFAULT_BINDS
    this.cgroupParent = init.cgroupParent ?? 'dms'
    this.cgroupRoot = init.cgroupRoot
    this.maxLogBytes = init.maxLogBytes ?? 1024 * 1024
    this.maxOutputBytes = init.maxOutputBytes ?? 16 * 1024 * 1024
    this.maxOutputFiles = init.maxOutputFiles ?? 10_000
    this.pollMs = init.pollMs ?? 100
    this.diskQuota = init.diskQuota ?? process.getuid?.() === 0
    this.gpuDevDir = init.gpuDevDir ?? '/dev'
    this.dirs = new WorkDirs({
      workDir: init.workDir,
      archiveDir: init.archiveDir ?? join(init.workDir, 'archives'),
      user: `${this.uid}:${this.gid}`,
      diskQuota: this.diskQuota,
    })
  }

  /** Unavailable, saying what is missing, on a host without root, util-linux or the cgroup controllers. */
  async capabilities(): Promise<EngineCapabilities> {
    const pre = await this.check()
    return {
      name: 'process',
      available: pre.ok,
      ...(pre.ok ? { version: `cgroup-v${pre.cgroup}` } : { why: pre.why }),
      artifactKinds: ['runtime'],
      runtimes: [...this.runtimes],
      gpus: (await hostGpus(this.gpuDevDir)).length > 0,
      networkPolicies: ['none'],
      diskQuota: this.diskQuota,
      fetchesArtifacts: false,
    }
  }

  /** A runtime is here when the provider offers it and the program exists. */
  async hasArtifact(artifact: ArtifactRef): Promise<boolean> {
    if (artifact.kind !== 'runtime' || !this.runtimes.has(artifact.ref)) return false
    return await fs.access(artifact.ref).then(
      () => true,
      () => false,
    )
  }

  async run(spec: ExecutionSpec, options: RunOptions = {}): Promise<ExecutionResult> {
    this.validate(spec)
    options.startAfter?.catch(() => {}) // awaited before the start; not unhandled if we fail sooner
    return await this.exclusively(spec.allocationId, async () => {
      const pre = await this.check()
      if (!pre.ok) throw new SandboxUnavailableError(pre.why)
      const log = this.log.child({ jobId: spec.jobId, allocationId: spec.allocationId })
      if (options.signal?.aborted === true) return notStarted('cancelled', -1, 'cancelled before start')
      await this.dirs.claim(spec.allocationId)
      const cgroup = this.cgroupOf(pre.cgroup, spec.allocationId)
      try {
        return await this.start(spec, cgroup, options, log)
      } finally {
        await this.cleanup(spec.allocationId, cgroup, log)
      }
    })
  }

  async reattach(spec: ExecutionSpec, options: RunOptions = {}): Promise<ExecutionResult> {
    this.validate(spec)
    return await this.exclusively(spec.allocationId, async () => {
      const pre = await this.check()
      if (!pre.ok) throw new SandboxUnavailableError(pre.why)
      const log = this.log.child({ jobId: spec.jobId, allocationId: spec.allocationId })
      const runDir = this.runDirOf(spec.allocationId)
      const record = await readRecord(runDir)
      const cgroup = this.cgroupOf(pre.cgroup, spec.allocationId)
      if (record === undefined || (await readPid(runDir)) === undefined) {
        // Never started: nothing ran, so nothing to take over.
        if (record !== undefined) await this.cleanup(spec.allocationId, cgroup, log)
        throw new AllocationNotFoundError(spec.allocationId)
      }
      try {
        const running = await isRunning(runDir)
        this.emit(options, { type: 'reattached', handle: cgroup.path, running }, log)
        log.info({ running }, 're-attached to the run')
        return await this.supervise(spec, cgroup, record.startedAt, options, log)
      } finally {
        await this.cleanup(spec.allocationId, cgroup, log)
      }
    })
  }

  async listRuns(): Promise<EngineRun[]> {
    let names: string[]
    try {
      names = await fs.readdir(this.init.workDir)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw err
    }
    const runs: EngineRun[] = []
    for (const name of names) {
      if (!ALLOCATION_ID.test(name)) continue
      const runDir = this.runDirOf(name)
      const record = await readRecord(runDir)
      if (record === undefined || record.allocationId !== name) continue
      runs.push({
        allocationId: name,
        jobId: record.jobId,
        handle: join(this.cgroupParent, `dms-${name}`),
        running: await isRunning(runDir),
      })
    }
    return runs
  }

  async removeAllocation(allocationId: AllocationId): Promise<void> {
    if (!ALLOCATION_ID.test(allocationId)) throw new InvalidSpecError('allocationId', 'is not a valid id')
    await this.exclusively(allocationId, async () => {
      const pre = await this.check()
      const log = this.log.child({ allocationId })
      if (pre.ok) await this.cleanup(allocationId, this.cgroupOf(pre.cgroup, allocationId), log)
      else await this.dirs.release(allocationId, log)
      await fs.rm(this.dirs.archiveOf(allocationId), { force: true })
    })
  }

  /** Rejects what this engine cannot run as given, before anything is made. */
  private validate(spec: ExecutionSpec): void {
    if (!ALLOCATION_ID.test(spec.allocationId)) {
      throw new InvalidSpecError(
        'allocationId',
        'must be 1-128 characters of A-Z a-z 0-9 _ . - (not starting with . _ -)',
      )
    }
    const problem = workloadProblem(spec.workload)
    if (problem !== undefined) throw new InvalidSpecError(`workload.${problem.field}`, problem.problem)
    if (isPod(spec.workload))
      throw new InvalidSpecError('workload.members', 'is a pod: the process engine runs one member')
    const m = spec.workload.members[0]
    const at = 'workload.members.0'
    if (m.artifact.kind !== 'runtime') {
      throw new InvalidSpecError(
        `${at}.artifact`,
        `is a ${m.artifact.kind}: the process engine runs runtimes only`,
      )
    }
    if (!this.runtimes.has(m.artifact.path)) {
      throw new InvalidSpecError(`${at}.artifact`, `runtime ${m.artifact.path} is not offered here`)
    }
    if (m.command[0] !== m.artifact.path) {
      throw new InvalidSpecError(`${at}.command`, `must start with the runtime's path ${m.artifact.path}`)
    }
    if (m.network !== 'none')
      throw new InvalidSpecError(`${at}.network`, 'must be none on the process engine')
    pinnedGpus(spec, m)
  }

  private async start(
    spec: ExecutionSpec,
    cgroup: Cgroup,
    options: RunOptions,
    log: Logger,
  ): Promise<ExecutionResult> {
    const m = spec.workload.members[0]
    const gpus = pinnedGpus(spec, m)
    const devices = await gpuDeviceNodes(this.gpuDevDir, gpus)
    const outputs = await this.dirs.makeOutputs(spec.allocationId)
    await this.dirs.limitOutputs(spec)
    const runDir = this.runDirOf(spec.allocationId)
    const rootDir = join(runDir, 'root')
    await fs.mkdir(rootDir, { recursive: true, mode: 0o700 })
    await cgroup.create({ memoryBytes: m.resources.memoryBytes, pids: spec.pidsLimit ?? 256 })
    this.emit(options, { type: 'created', handle: cgroup.path }, log)
    await options.startAfter // a rejection leaves through run's cleanup: nothing has started
    if (options.signal?.aborted === true) return notStarted('cancelled', -1, 'cancelled before start')
    const startedAt = this.clock.now()
    const record: RunRecord = { v: 1, jobId: spec.jobId, allocationId: spec.allocationId, startedAt }
    await fs.writeFile(join(runDir, 'run.json'), JSON.stringify(record))
    const argv = sandboxArgv({
      runDir,
      maxLogBytes: this.maxLogBytes,
      cgroupDirs: cgroup.dirs(),
      rootDir,
      uid: this.uid,
      gid: this.gid,
      outputsDir: outputs,
      ...(spec.inputsDir !== undefined ? { inputsDir: spec.inputsDir } : {}),
      workdir: m.workdir ?? '/',
      cpuLimit: cgroup.cpuLimit(m.resources.cpu),
      binds: this.binds,
      devices,
      // The GPUs' variables last: a job cannot point CUDA at GPUs it was not given.
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp', ...m.env, ...gpuEnv(gpus) },
      command: m.command,
    })
    const child = spawn('/bin/sh', argv, { detached: true, stdio: 'ignore', env: { PATH: SYSTEM_PATH } })
    // Started once the runner says who it is: a crash after this leaves a run to re-attach to.
    while ((await readPid(runDir)) === undefined && child.exitCode === null) await waitMs(10)
    child.unref()
    this.emit(options, { type: 'started' }, log)
    return await this.supervise(spec, cgroup, startedAt, options, log)
  }

  /**
   * Follows a started run to its end: its logs from the start, the timeout, the signal, usage
   * samples; then classifies its exit and collects /outputs.
   */
  private async supervise(
    spec: ExecutionSpec,
    cgroup: Cgroup,
    startedAt: number,
    options: RunOptions,
    log: Logger,
  ): Promise<ExecutionResult> {
    // Nothing else holds the event loop (the clock's timers are unref'd, the runner is detached),
    // as Docker's socket does for its engine: a process supervising a run stays up until it ends.
    const keepAlive = setInterval(() => {}, 60_000)
    try {
      return await this.follow(spec, cgroup, startedAt, options, log)
    } finally {
      clearInterval(keepAlive)
    }
  }

  private async follow(
    spec: ExecutionSpec,
    cgroup: Cgroup,
    startedAt: number,
    options: RunOptions,
    log: Logger,
  ): Promise<ExecutionResult> {
    const runDir = this.runDirOf(spec.allocationId)
    const emit = (e: ExecutionEvent): void => this.emit(options, e, log)
    const stdout = new LogTail(join(runDir, 'stdout'), this.maxLogBytes, (chunk) =>
      emit({ type: 'log', stream: 'stdout', chunk }),
    )
    const stderr = new LogTail(join(runDir, 'stderr'), this.maxLogBytes, (chunk) =>
      emit({ type: 'log', stream: 'stderr', chunk }),
    )
    let stopRequested: StopReason | undefined
    let killed = false
    let exitCode: number | undefined
    let lastSample = 0
    const gpus = await this.gpuMeterOf(spec)
    for (;;) {
      await stdout.read()
      await stderr.read()
      exitCode = await readExit(runDir)
      if (exitCode !== undefined) break
      if (!(await isRunning(runDir))) {
        // The runner died without a word (the host rebooted, someone killed it): nothing to wait for.
        exitCode = (await readExit(runDir)) ?? 137
        break
      }
      const now = this.clock.now()
      if (stopRequested === undefined) {
        if (options.signal?.aborted === true) stopRequested = 'cancelled'
        else if (now - startedAt >= spec.timeoutSeconds * 1000) stopRequested = 'timed_out'
        if (stopRequested !== undefined) killed = await cgroup.killAll()
      }
      if (now - lastSample >= 500) {
        lastSample = now
        const u = await cgroup.usage()
        emit({ type: 'usage', cpuSeconds: u.cpuSeconds, memoryBytes: u.memoryBytes })
        gpus?.tick(now)
      }
      await delay(this.pollMs, { clock: this.clock })
    }
    await stdout.read()
    await stderr.read()
    stdout.capture.flushText()
    stderr.capture.flushText()
    const u = await cgroup.usage()
    const oomKilled = await cgroup.oomKilled()
    const gpuUsage = await gpus?.end(this.clock.now())
    emit({ type: 'exited', exitCode })
    const archiveFile = await this.dirs.freshArchive(spec.allocationId)
    const result = await runResult({
      exitCode,
      stopRequested,
      killed,
      oomKilled,
      timeoutSeconds: spec.timeoutSeconds,
      usage: {
        wallSeconds: (this.clock.now() - startedAt) / 1000,
        cpuSeconds: u.cpuSeconds,
        peakMemoryBytes: u.peakMemoryBytes,
        ...gpuUsage,
      },
      stdout: stdout.capture.text(),
      stderr: stderr.capture.text(),
      truncated: stdout.capture.truncated || stderr.capture.truncated,
      outputsDir: this.dirs.outputsOf(spec.allocationId),
      archiveFile,
      quotaBytes: this.dirs.quotaOf(spec),
      limits: { maxBytes: this.maxOutputBytes, maxFiles: this.maxOutputFiles },
    })
    const { status, reason, usage } = result
    log.info({ status, exitCode, reason, wallSeconds: usage.wallSeconds }, 'run finished')
    return result
  }

  /** The GPU meter of a run with GPUs, when there is an nvidia-smi to ask; undefined otherwise. */
  private async gpuMeterOf(spec: ExecutionSpec): Promise<PolledGpuMeter | undefined> {
    const indices = pinnedGpus(spec, spec.workload.members[0])
    if (indices.length === 0) return undefined
    this.nvidiaSmi ??=
      this.init.nvidiaSmi !== undefined ? Promise.resolve(this.init.nvidiaSmi) : findNvidiaSmi()
    const smi = await this.nvidiaSmi
    return smi === undefined ? undefined : new PolledGpuMeter(new GpuMeter(nvidiaSmiQuery(smi), indices))
  }

  /** Kills what is left in the cgroup, removes it, the quota and the work folder; logs what it could not. */
  private async cleanup(allocationId: AllocationId, cgroup: Cgroup, log: Logger): Promise<void> {
    try {
      await cgroup.killAll()
      await cgroup.remove()
    } catch (err) {
      log.warn({ err }, 'could not remove the cgroup')
    }
    await this.dirs.release(allocationId, log)
  }

  private cgroupOf(version: 1 | 2, allocationId: AllocationId): Cgroup {
    return new Cgroup(version, join(this.cgroupParent, `dms-${allocationId}`), this.cgroupRoot)
  }

  private runDirOf(allocationId: AllocationId): string {
    // Inside the allocation's folder, which WorkDirs claims and removes.
    return join(this.init.workDir, allocationId, RUN)
  }

  private check(): Promise<Prerequisites> {
    this.prerequisites ??= checkPrerequisites(
      this.cgroupRoot !== undefined ? { cgroupRoot: this.cgroupRoot } : {},
    )
    return this.prerequisites
  }

  private emit(options: RunOptions, event: ExecutionEvent, log: Logger): void {
    try {
      options.onEvent?.(event)
    } catch (err) {
      log.warn({ err }, 'onEvent listener threw')
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
}

/** Reads what a log file gained since the last read into a capture (which emits it). */
class LogTail {
  readonly capture: LogCapture
  private offset = 0

  constructor(
    private readonly file: string,
    maxBytes: number,
    onChunk: (text: string) => void,
  ) {
    this.capture = new LogCapture(maxBytes, onChunk)
  }

  async read(): Promise<void> {
    let handle: fs.FileHandle
    try {
      handle = await fs.open(this.file, 'r')
    } catch {
      return // not made yet
    }
    try {
      const buf = Buffer.alloc(64 * 1024)
      for (;;) {
        const { bytesRead } = await handle.read(buf, 0, buf.length, this.offset)
        if (bytesRead === 0) return
        this.offset += bytesRead
        this.capture.take(buf.subarray(0, bytesRead))
      }
    } finally {
      await handle.close()
    }
  }
}

/** A real-time wait that holds the event loop (the runner's first words come in real time). */
const waitMs = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function readRecord(runDir: string): Promise<RunRecord | undefined> {
  try {
    const r = JSON.parse(await fs.readFile(join(runDir, 'run.json'), 'utf8')) as Partial<RunRecord>
    if (r.v !== 1 || typeof r.jobId !== 'string' || typeof r.startedAt !== 'number') return undefined
    return r as RunRecord
  } catch {
    return undefined
  }
}

async function readNumber(file: string): Promise<number | undefined> {
  const text = await fs.readFile(file, 'utf8').catch(() => undefined)
  if (text === undefined || !/^-?\d{1,10}\n?$/.test(text)) return undefined
  return Number(text.trim())
}

const readPid = (runDir: string): Promise<number | undefined> => readNumber(join(runDir, 'pid'))
const readExit = (runDir: string): Promise<number | undefined> => readNumber(join(runDir, 'exit'))

/**
 * Whether the runner is still alive: no exit file, and its pid is a runner of this folder (after
 * a reboot the pid may be another process's: then the run is over, never waited on forever).
 */
async function isRunning(runDir: string): Promise<boolean> {
  if ((await readExit(runDir)) !== undefined) return false
  const pid = await readPid(runDir)
  if (pid === undefined) return false
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`).catch(() => undefined)
  if (cmdline === undefined) return false
  const args = cmdline.toString('utf8').split('\0')
  // sh -c RUNNER dms-runner <runDir> ...
  return args[3] === 'dms-runner' && args[4] === runDir
}
