import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { Handle } from '../../actors/envelope.js'
import type { KeyPair } from '../../actors/identity.js'
import type { Actor } from '../../actors/system.js'
import { signDoc } from '../contracts/canonical.js'
import { DOMAIN, type Receipt, type SignedContract } from '../contracts/model.js'
import type { ExecutionResult, Executor } from '../executor/executor.js'
import { notStarted } from '../executor/outputs.js'
import { B, type JobResult, type JobUpdate } from '../messages.js'
import type { ResourceLedger } from '../resources/ledger.js'
import { Repo, type Db } from '../store/db.js'

export type AllocationState =
  | 'contracted'
  | 'provisioning'
  | 'running'
  | 'publishing'
  | 'completed'
  | 'failed'
  | 'timed_out'
  | 'cancelled'
  | 'released'

export interface AllocationRecord {
  allocationId: string
  jobId: string
  contract: SignedContract
  /** The ledger entry holding this allocation's resources. */
  ledgerId: string
  requester: Handle
  command: string[]
  env: Record<string, string>
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
    },
    _init: Record<string, never>,
  ) {
    this.repo = new Repo(c.db, 'allocations')
  }

  /** Runs the allocation as `actor` (its own child actor), which is stopped when the run ends. */
  launch(actor: Actor, rec: AllocationRecord): void {
    const abort = new AbortController()
    const done = this.run(actor, rec, abort.signal).catch((err: unknown) => {
      this.c.log.error({ err, allocationId: rec.allocationId }, 'allocation crashed')
    })
    this.running.set(rec.allocationId, { abort, done })
    void done.finally(() => {
      this.running.delete(rec.allocationId)
      actor.stop()
    })
  }

  async stop(): Promise<void> {
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
    rec.state = state
    rec.history.push({ state, at, detail })
    await this.repo.put(rec.allocationId, rec)
    const update: JobUpdate = { jobId: rec.jobId, allocationId: rec.allocationId, state, at, detail }
    await actor.send(rec.requester, B.update, update).catch(() => {})
  }

  private async run(actor: Actor, rec: AllocationRecord, signal: AbortSignal): Promise<void> {
    const t = rec.contract.terms
    const log = this.c.log.child({ allocationId: rec.allocationId, jobId: rec.jobId })
    await this.repo.put(rec.allocationId, rec)
    await this.step(actor, rec, 'provisioning')
    let result: ExecutionResult
    try {
      let announced = false
      result = await this.c.executor.run(
        {
          jobId: rec.jobId,
          allocationId: rec.allocationId,
          image: t.image,
          command: rec.command,
          env: rec.env,
          cpu: t.resources.cpu,
          memoryBytes: t.resources.memoryBytes,
          timeoutSeconds: t.maxDurationSeconds,
        },
        {
          signal,
          onEvent: (e) => {
            if (e.type === 'started' && !announced) {
              announced = true
              void this.step(actor, rec, 'running')
            }
          },
        },
      )
    } catch (err) {
      log.warn({ err }, 'allocation could not run')
      result = notStarted('failed', -1, (err as Error).message)
    }
    await this.step(actor, rec, 'publishing')
    const receipt: Receipt = {
      contractId: t.contractId,
      jobId: rec.jobId,
      allocationId: rec.allocationId,
      status: result.status,
      exitCode: result.exitCode,
      reason: result.reason,
      outputsHash: result.outputsHash,
      usage: result.usage,
      finishedAt: this.c.clock.now(),
    }
    const message: JobResult = {
      jobId: rec.jobId,
      receipt: { receipt, signature: signDoc(this.c.key, DOMAIN.receipt, receipt) },
      stdout: result.stdout,
      stderr: result.stderr,
      truncated: result.truncated,
      outputs: result.outputs,
    }
    rec.result = {
      status: result.status,
      exitCode: result.exitCode,
      reason: result.reason,
      outputsHash: result.outputsHash,
    }
    await this.step(actor, rec, result.status, result.reason)
    await actor.send(rec.requester, B.result, message, { ttlMs: 120_000 }).catch((err: unknown) => {
      log.warn({ err }, 'result not delivered')
    })
    await this.c.ledger.release(rec.ledgerId)
    await this.step(actor, rec, 'released')
    log.info({ status: result.status, exitCode: result.exitCode }, 'allocation finished')
  }
}
