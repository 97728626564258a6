import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from 'pino'
import type { BlobService } from '../blobs/service.js'
import { LIMITS } from '../protocol/bounds.js'
import { stageInputs, type InputFile } from '../blobs/staging.js'
import { blobsHandle, fetchBlobs, LogForwarder } from '../blobs/transfer.js'
import { every, type Clock } from '../../actors/clock.js'
import { exponential, retry } from '../../actors/retry.js'
import type { Handle } from '../../actors/envelope.js'
import type { KeyPair } from '../../actors/identity.js'
import type { Actor } from '../../actors/system.js'
import { signDoc } from '../contracts/canonical.js'
import { DOMAIN, type Receipt, type SignedContract } from '../contracts/model.js'
import type { ExecutionResult, ExecutionSpec, Executor, RunOptions } from '../executor/executor.js'
import { hashOutputs } from '../protocol/outputs.js'
import { notStarted } from '../executor/outputs.js'
import { W } from '../protocol/behaviours.js'
import {
  HEARTBEAT,
  type JobResult,
  type JobUpdate,
  type OutputArchive,
  type OutputEntry,
} from '../protocol/messages.js'
import type { ResourceLedger } from '../resources/ledger.js'
import { Repo, type Db } from '../store/db.js'
import { nextAllocationState, type AllocationState } from './allocation-machine.js'

export type { AllocationState } from './allocation-machine.js'

/** How an allocation is (re)started: fresh, re-attached after a restart, or known lost. */
type LaunchMode = 'run' | 'reattach' | 'lost'

/** States an allocation can be left in by a crash. */
const UNFINISHED = new Set<AllocationState>(['contracted', 'provisioning', 'running', 'publishing'])

export interface RecoverySummary {
  reattached: number
  restarted: number
  lost: number
  orphansRemoved: number
}

export interface AllocationRecord {
  allocationId: string
  jobId: string
  contract: SignedContract
  /** The ledger entry holding this allocation's resources. */
  ledgerId: string
  requester: Handle
  command: string[]
  env: Record<string, string>
  /** Staged read-only at /inputs before the run. @default [] (records of dms 0.1) */
  inputs?: InputFile[]
  /**
   * The disk quota on /outputs: the job's disk, or the provider's default when the job gave none
   * (specs/resources.md, "Disk"). Held in the ledger entry as well. @default the contract's disk
   */
  diskBytes?: number
  state: AllocationState
  history: Array<{ state: AllocationState; at: number; detail?: string }>
  result?: { status: string; exitCode: number; reason?: string; outputsHash: string }
}

/**
 * Runs allocations: provisions, executes in the Executor, publishes the result with a signed
 * receipt, releases the resources. Each step is stamped in the allocation's persisted history.
 */
export class AllocationRunner {
  readonly repo: Repo<AllocationRecord>
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>()

  constructor(
    private readonly c: {
      executor: Executor
      ledger: ResourceLedger
      key: KeyPair
      db: Db
      clock: Clock
      log: Logger
      /** The node's blobs: inputs fetched and staged, output archives published. */
      blobs: BlobService
      /** Holds `inputs/<allocationId>/`, the staged inputs of running allocations. */
      workDir: string
    },
    private readonly init: {
      /** How often a live allocation tells its requester so (liveness). @default 2000 */
      heartbeatMs?: number
    } = {},
  ) {
    this.repo = new Repo(c.db, 'allocations')
  }

  /** Stops a running allocation on its requester's request; false when none is running. */
  cancel(allocationId: string): boolean {
    const r = this.running.get(allocationId)
    if (r === undefined) return false
    r.abort.abort(new Error('cancelled by the requester'))
    return true
  }

  /** Sends a heartbeat update every `heartbeatMs` until the returned function is called. */
  private heartbeat(actor: Actor, rec: AllocationRecord): () => void {
    const stop = every(this.c.clock, this.init.heartbeatMs ?? 2000, () => {
      if (!this.running.has(rec.allocationId)) return stop()
      const update: JobUpdate = {
        jobId: rec.jobId,
        allocationId: rec.allocationId,
        state: rec.state,
        at: this.c.clock.now(),
        detail: HEARTBEAT,
      }
      void actor.send(rec.requester, W.update, update, { ttlMs: 10_000 }).catch(() => {})
    })
    return stop
  }

  /**
   * Delivers the result, retrying with backoff (1, 2, 4... s, about a minute in all) while the
   * requester is unreachable (it may be restarting), unless the provider is stopping.
   */
  private async deliver(actor: Actor, rec: AllocationRecord, message: JobResult): Promise<void> {
    try {
      await retry(() => actor.send(rec.requester, W.result, message, { ttlMs: 120_000 }), {
        attempts: 6,
        backoffMs: exponential(1000),
        retryIf: () => !this.stopping,
        clock: this.c.clock,
        signal: this.stopped.signal,
      })
    } catch (err) {
      this.c.log.warn({ err, allocationId: rec.allocationId }, 'result not delivered')
    }
  }

  /** Runs the allocation as `actor` (its own child actor), which is stopped when the run ends. */
  launch(actor: Actor, rec: AllocationRecord, how: LaunchMode = 'run'): void {
    const abort = new AbortController()
    const done = this.run(actor, rec, abort.signal, how).catch((err: unknown) => {
      this.c.log.error({ err, allocationId: rec.allocationId }, 'allocation crashed')
    })
    this.running.set(rec.allocationId, { abort, done })
    void done.finally(() => {
      this.running.delete(rec.allocationId)
      actor.stop()
    })
  }

  /**
   * After a restart: carries on with every allocation an earlier process left unfinished (re-attaches
   * to its container, or starts it if it never started, or reports it lost if its container is
   * gone mid-run), and removes containers of allocations this provider does not know.
   */
  async recover(spawn: (allocationId: string) => Actor): Promise<RecoverySummary> {
    const summary: RecoverySummary = { reattached: 0, restarted: 0, lost: 0, orphansRemoved: 0 }
    const containers = new Set((await this.c.executor.listManaged()).map((m) => m.allocationId))
    for (const rec of await this.repo.values()) {
      if (!UNFINISHED.has(rec.state) || this.running.has(rec.allocationId)) continue
      if (containers.delete(rec.allocationId)) {
        this.launch(spawn(rec.allocationId), rec, 'reattach')
        summary.reattached++
      } else if (rec.state === 'contracted' || rec.state === 'provisioning') {
        this.launch(spawn(rec.allocationId), rec, 'run')
        summary.restarted++
      } else {
        this.launch(spawn(rec.allocationId), rec, 'lost')
        summary.lost++
      }
    }
    for (const allocationId of containers) {
      if (this.running.has(allocationId)) continue
      await this.c.executor.removeAllocation(allocationId).catch((err: unknown) => {
        this.c.log.warn({ err, allocationId }, 'could not remove an orphaned container')
      })
      summary.orphansRemoved++
    }
    if (summary.reattached + summary.restarted + summary.lost + summary.orphansRemoved > 0) {
      this.c.log.info(summary, 'allocations recovered after restart')
    }
    return summary
  }

  /** Resolves once every allocation running now has ended (released its resources). */
  async idle(): Promise<void> {
    await Promise.all([...this.running.values()].map((r) => r.done))
  }

  private stopping = false
  /** Aborted by `stop`: cuts the waits between delivery attempts short. */
  private readonly stopped = new AbortController()

  async stop(): Promise<void> {
    this.stopping = true
    this.stopped.abort(new Error('provider stopping'))
    for (const r of this.running.values()) r.abort.abort(new Error('provider stopping'))
    await Promise.all([...this.running.values()].map((r) => r.done))
  }

  private async step(
    actor: Actor,
    rec: AllocationRecord,
    state: AllocationState,
    detail?: string,
  ): Promise<void> {
    const at = this.c.clock.now()
    // The allocation machine decides (throws on a transition it does not allow).
    rec.state = nextAllocationState(rec.state, state)
    rec.history.push({ state: rec.state, at, detail })
    await this.repo.put(rec.allocationId, rec)
    // Within the requester's bound on the field (dms/protocol/bounds.ts), or the update would be refused.
    const update: JobUpdate = {
      jobId: rec.jobId,
      allocationId: rec.allocationId,
      state,
      at,
      detail: clip(detail),
    }
    await actor.send(rec.requester, W.update, update).catch(() => {})
  }

  private inputsDir(allocationId: string): string {
    return join(this.c.workDir, 'inputs', allocationId)
  }

  /**
   * Fetches the inputs' blobs this provider lacks from the requester's node (each checked against
   * its hash) and lays them out read-only for /inputs. Returns the folder (none without inputs).
   */
  private async stageInputs(
    actor: Actor,
    rec: AllocationRecord,
    signal: AbortSignal,
  ): Promise<{ dir?: string; detail?: string }> {
    const inputs = rec.inputs ?? []
    if (inputs.length === 0) return {}
    const from = blobsHandle(rec.requester.peer, rec.requester.addrs)
    const fetched = await fetchBlobs(actor, this.c.blobs, from, inputs, { signal })
    const dir = this.inputsDir(rec.allocationId)
    await rm(dir, { recursive: true, force: true })
    await stageInputs(this.c.blobs.store, inputs, dir)
    const bytes = inputs.reduce((n, f) => n + f.size, 0)
    return {
      dir,
      detail: `inputs staged: ${inputs.length} files, ${bytes} bytes (${fetched.length} blobs fetched, ${inputs.length - fetched.length} cached)`,
    }
  }

  /**
   * The outputs' archive (a tar file the executor wrote and hashed) moved into the blob store and
   * granted to the requester's node, and their manifest (the receipt's outputsHash is over it).
   */
  private async publishOutputs(
    rec: AllocationRecord,
    result: ExecutionResult,
  ): Promise<{ outputs: OutputEntry[]; archive?: OutputArchive }> {
    const outputs = result.outputs.map(({ path, sha256, size }) => ({ path, sha256, size }))
    const archive = result.archive
    if (archive === undefined) {
      if (outputs.length > 0) throw new Error('the executor listed outputs without their archive')
      return { outputs }
    }
    await this.c.blobs.store.adopt(archive.file, archive)
    await this.c.blobs.grant(rec.requester.peer, archive.sha256)
    return { outputs, archive: { sha256: archive.sha256, size: archive.size } }
  }

  private async run(
    actor: Actor,
    rec: AllocationRecord,
    signal: AbortSignal,
    how: LaunchMode,
  ): Promise<void> {
    const t = rec.contract.terms
    const log = this.c.log.child({ allocationId: rec.allocationId, jobId: rec.jobId })
    await this.repo.put(rec.allocationId, rec)
    const spec: ExecutionSpec = {
      jobId: rec.jobId,
      allocationId: rec.allocationId,
      image: t.image,
      command: rec.command,
      env: rec.env,
      cpu: t.resources.cpu,
      memoryBytes: t.resources.memoryBytes,
      diskBytes: rec.diskBytes ?? t.resources.diskBytes,
      gpus: t.resources.gpus,
      timeoutSeconds: t.maxDurationSeconds,
    }
    const stopHeartbeat = this.heartbeat(actor, rec)
    let announced = false
    const forwarder = new LogForwarder((l) => actor.send(rec.requester, W.log, l), this.c.clock, {
      jobId: rec.jobId,
      allocationId: rec.allocationId,
    })
    const options: RunOptions = {
      signal,
      onEvent: (e) => {
        if (e.type === 'log') forwarder.push(e.stream, e.chunk)
        if ((e.type === 'started' || (e.type === 'reattached' && e.running)) && !announced) {
          announced = true
          void this.step(
            actor,
            rec,
            'running',
            e.type === 'reattached' ? 're-attached after a restart' : undefined,
          )
        }
      },
    }
    let result: ExecutionResult
    try {
      if (how === 'lost') {
        result = notStarted(
          'failed',
          -1,
          'the provider restarted and the container was gone: the run is lost',
        )
      } else if (how === 'reattach') {
        result = await this.c.executor.reattach(spec, options).catch(async (err: unknown) => {
          // A container created but never started is removed by reattach: start afresh.
          if ((err as Error).name !== 'AllocationNotFoundError') throw err
          await this.step(actor, rec, 'provisioning', 'started afresh after a restart')
          return this.c.executor.run(spec, options)
        })
      } else {
        await this.step(actor, rec, 'provisioning')
        const staged = await this.stageInputs(actor, rec, signal)
        if (staged.detail !== undefined) await this.step(actor, rec, 'provisioning', staged.detail)
        result = await this.c.executor.run({ ...spec, inputsDir: staged.dir }, options)
      }
    } catch (err) {
      log.warn({ err }, 'allocation could not run')
      result = notStarted('failed', -1, (err as Error).message)
    }
    forwarder.flush()
    await rm(this.inputsDir(rec.allocationId), { recursive: true, force: true })
    await this.step(actor, rec, 'publishing')
    const published = await this.publishOutputs(rec, result).catch(async (err: unknown) => {
      log.warn({ err }, 'outputs could not be archived')
      if (result.archive !== undefined) await rm(result.archive.file, { force: true }).catch(() => {})
      // The run stands (status, exit code, usage, logs): only its outputs are lost.
      const lost = `outputs could not be archived: ${(err as Error).message}`
      const reason = result.status === 'completed' ? lost : `${result.reason ?? result.status}; ${lost}`
      const status = result.status === 'completed' ? 'failed' : result.status
      result = { ...result, status, reason, outputs: [], archive: undefined, outputsHash: hashOutputs([]) }
      return { outputs: [], archive: undefined }
    })
    const receipt: Receipt = {
      contractId: t.contractId,
      jobId: rec.jobId,
      allocationId: rec.allocationId,
      status: result.status,
      exitCode: result.exitCode,
      reason: clip(result.reason),
      outputsHash: result.outputsHash,
      ...(result.outputsSkipped !== undefined ? { outputsSkipped: result.outputsSkipped } : {}),
      usage: result.usage,
      finishedAt: this.c.clock.now(),
    }
    const message: JobResult = {
      jobId: rec.jobId,
      receipt: { receipt, signature: signDoc(this.c.key, DOMAIN.receipt, receipt) },
      stdout: result.stdout,
      stderr: result.stderr,
      truncated: result.truncated,
      outputs: published.outputs,
      ...(published.archive !== undefined ? { archive: published.archive } : {}),
    }
    rec.result = {
      status: result.status,
      exitCode: result.exitCode,
      reason: result.reason,
      outputsHash: result.outputsHash,
    }
    await this.step(actor, rec, result.status, result.reason)
    stopHeartbeat()
    await this.c.ledger.release(rec.ledgerId)
    await this.step(actor, rec, 'released')
    log.info({ status: result.status, exitCode: result.exitCode }, 'allocation finished')
    await this.deliver(actor, rec, message)
  }
}

/** A reason or detail cut to the bound peers enforce on it (`LIMITS.text`). */
const clip = (text: string | undefined): string | undefined =>
  text === undefined || text.length <= LIMITS.text ? text : text.slice(0, LIMITS.text)
