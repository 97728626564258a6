/** The requester's settings (`requester` in the node config, specs/config.md) and their defaults. */
import { DEFAULT_TRANSFER_PACE, type TransferPace } from '../blobs/transfer.js'
import { DEFAULT_START_GRACE_SECONDS } from '../contracts/start.js'
import type { RetentionPolicy } from './retention.js'
import type { StepConfig } from './steps/deps.js'

export interface OrchestratorInit {
  /** The contract-db this requester uses: peer id and addresses. */
  contractDb: { peer: string; addrs: string[] }
  /** Longest bid window. @default 3000 */
  bidWindowMs?: number
  /** Close the window early once this many bids are in. @default 3 */
  enoughBids?: number
  /** Grace after the max duration before a silent provider is given up. @default 30000 */
  resultGraceMs?: number
  /** Per-request timeout for lock, contract, invocation, settlement. @default 10000 */
  requestTimeoutMs?: number
  /**
   * Attempts at settling or terminating when the contract-db is unreachable or slow (it may be
   * restarting), and at verifying a contract when it is unreachable; waits 1 s, 2 s, 4 s...
   * between them. @default 4
   */
  settleAttempts?: number
  /** Bid requests published (1 s, 2 s... apart) while some providers stay silent. @default 3 */
  publishAttempts?: number
  /** A running job's provider silent this long is dropped (provider fault). @default 6000 */
  livenessTimeoutMs?: number
  /**
   * Bid requests in a row a provider may leave unanswered before bid windows stop waiting for it
   * (it is still asked, and its answers count). @default 3
   */
  bidSilentAfter?: number
  /** Longest a bid window stays open after its first answer, for providers yet to answer. @default 500 */
  bidStragglerMs?: number
  /**
   * The slowest rate an output archive may arrive at: its fetch must end within
   * `outputsFetchGraceMs` + size / this, counted from the `verifying` stamp (a restart does not
   * extend it); otherwise the outputs do not verify. @default 262144 (256 KiB/s)
   */
  outputsMinBytesPerSecond?: number
  /** The fixed part of an output archive's fetch deadline. @default 30000 */
  outputsFetchGraceMs?: number
  /**
   * Seconds a job that gives no `queueTimeout` may wait in `queued` for a provider with room;
   * 0 fails it at once (NO_BIDS). @default 0
   */
  queueTimeoutSeconds?: number
  /** First wait of a queued job before it bids again without capacity news (doubles). @default 1000 */
  queueRetryMinMs?: number
  /** Longest wait of a queued job before it bids again without capacity news. @default 30000 */
  queueRetryMaxMs?: number
  /** Default idle expiry of a queue with no live job (specs/queues.md). @default 86400 */
  queueIdleExpirySeconds?: number
  /** Ended jobs pruned (with their blobs and grants) by age or count, hourly (specs/queues.md). */
  retention?: RetentionPolicy
  /** Most tasks in one workflow (specs/workflow.md). @default 32 */
  maxWorkflowTasks?: number
  /**
   * Seconds a contract's provider has to start its run, counted from max(the draft, the bid's
   * earliestStart): the contract's `startBy`; not started by then, the contract-db expires it with
   * a full refund (specs/contract-db.md, "Start notes"). 1-3600. @default 120
   */
  startGraceSeconds?: number
}

/** The settings of a job's steps and its contract-db client, defaults applied. */
export type JobConfig = StepConfig & { settleAttempts: number }

export function jobConfigOf(init: OrchestratorInit): JobConfig {
  return {
    bidWindowMs: init.bidWindowMs ?? 3000,
    enoughBids: init.enoughBids ?? 3,
    resultGraceMs: init.resultGraceMs ?? 30_000,
    requestTimeoutMs: init.requestTimeoutMs ?? 10_000,
    settleAttempts: init.settleAttempts ?? 4,
    publishAttempts: init.publishAttempts ?? 3,
    livenessTimeoutMs: init.livenessTimeoutMs ?? 6000,
    outputsPace: {
      minBytesPerSecond: init.outputsMinBytesPerSecond ?? DEFAULT_TRANSFER_PACE.minBytesPerSecond,
      graceMs: init.outputsFetchGraceMs ?? DEFAULT_TRANSFER_PACE.graceMs,
    },
    queueRetryMinMs: init.queueRetryMinMs ?? 1000,
    queueRetryMaxMs: init.queueRetryMaxMs ?? 30_000,
    startGraceSeconds: init.startGraceSeconds ?? DEFAULT_START_GRACE_SECONDS,
  }
}

/** How a job's outputs are fetched on demand: as in `verifying` (kept-outputs.ts). */
export function outputsFetchOf(init: OrchestratorInit): { requestTimeoutMs: number; pace: TransferPace } {
  const c = jobConfigOf(init)
  return { requestTimeoutMs: c.requestTimeoutMs, pace: c.outputsPace }
}
