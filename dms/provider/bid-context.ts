/**
 * What the provider's bid machine knows about one bid (its context), the events that move it, and
 * how its states read from outside (`/dms/job/update`, `GET /v1/allocations`, the bid record of
 * 0.1). Spec: specs/state-machines.md ("Provider bid and allocation").
 */
import type { Handle } from '../../actors/envelope.js'
import type { InputFile } from '../blobs/staging.js'
import type { Bid, SignedContract } from '../contracts/model.js'
import type { ExecutionResult, ResourceUsage } from '../executor/executor.js'
import type { BidRequest, JobResult, JobUpdate } from '../protocol/messages.js'
import type { Resources } from '../resources/types.js'
import type { Workload } from '../workload/workload.js'

/** What an invocation asked for, kept from `/dms/job/invoke` to the end of the run. */
export interface Allocation {
  allocationId: string
  contract: SignedContract
  /** Staged read-only at /inputs before the run. */
  inputs: InputFile[]
  /** What runs, as invoked and checked (invoked-workload.ts). */
  workload: Workload
  /** The disk quota on /outputs: what the ledger holds (the job's disk, or the default quota). */
  diskBytes: number
  /**
   * The GPUs the ledger holds for it, by index (`MachineInfo.gpus[].index`), passed to the engine;
   * absent without GPUs (and on records made before GPUs were named).
   */
  gpuIndices?: number[]
  invokedAt: number
  /**
   * Provisioning (staging the inputs, pulling the image, creating the container) must end by
   * then: the invocation + `provisionTimeoutMs`. Past it the allocation fails.
   */
  provisionBy: number
}

/** The run's outcome as the allocation record and the REST API show it. */
export type RunSummary = {
  status: 'completed' | 'failed' | 'timed_out' | 'cancelled'
  exitCode: number
  reason?: string
  outputsHash: string
  /**
   * What the run used, as its receipt states it (kept so an ended allocation still shows its
   * usage: `GET /v1/allocations`, the dashboard). Absent on records made before it was kept.
   */
  usage?: ResourceUsage
}

export type HistoryEntry = {
  state: string
  at: number
  detail?: string
}

export interface BidContext {
  bid: Bid
  /** The bid request, without the requester's credential (checked, not stored). */
  request: Omit<BidRequest, 'approval'>
  /** The job's actor on the requester's node: the bid, updates and the result go there. */
  requester: Handle
  /** What the ledger holds (ledger id = bid id): the job's resources, with the default disk quota. */
  held: Resources
  /** When the lock was made. */
  lockedAt?: number
  /** A lock not followed by a contract by then is released (`contractWindowMs` after the lock). */
  contractBy?: number
  /** A contract not followed by an invocation by then is released (`lockTtlMs` after the lock). */
  invokeBy?: number
  /** hashDoc of the countersigned terms, and their contract id (the cancel index). */
  contractHash?: string
  contractId?: string
  /**
   * The countersigned terms of a `/dms/contract/sign` that came for the reserved bid (the lock
   * folded into the contract): taken as the contract once the lock is made.
   */
  signing?: ContractSigned
  allocation?: Allocation
  /** The executor's result, from the end of the run until it is published. */
  run?: ExecutionResult
  /** The signed receipt with stdout, stderr and outputs, from publishing until delivered. */
  message?: JobResult
  result?: RunSummary
  /** The run's inputs are staged (provisioning goes on with the container). */
  staged?: boolean
  /** The ledger entry was released / the result's delivery is over (the ending states wait for both). */
  freed?: boolean
  delivered?: boolean
  /** Why a command from the requester could not be carried out (the lock or the allocation failed). */
  refusal?: { code: string; message: string }
  /** Why the bid ended without a run (expired, given up, cancelled before its invocation). */
  ending?: string
  history: HistoryEntry[]
  /** Set at restore only: the state the stored machine was in, which it goes back to. */
  resume?: BidState
  /** The state a restored machine went back to (the run re-attaches from it). */
  restoredIn?: BidState
}

/** The machine's states, flattened (`provisioning` and `running` are the two steps of `active`). */
export type BidState =
  | 'reserved'
  | 'locking'
  | 'locked'
  | 'contracted'
  | 'allocating'
  | 'waiting'
  | 'provisioning'
  | 'running'
  | 'publishing'
  | 'completed'
  | 'failed'
  | 'timed_out'
  | 'cancelled'
  | 'expired'
  | 'withdrawn'
  | 'released'

/** The contract a bid's terms make: its id and the hash of the countersigned terms. */
export interface ContractSigned {
  contractId: string
  contractHash: string
}

export type BidEvent =
  /**
   * `/dms/job/request`: lock the reservation. With `sign`, `/dms/contract/sign` for the reserved
   * bid: lock it, then take the contract (the machine's LOCK then SIGN in one step).
   */
  | { type: 'LOCK'; sign?: ContractSigned }
  /** `/dms/contract/sign`: the terms were checked and countersigned. */
  | ({ type: 'SIGN' } & ContractSigned)
  /** `/dms/job/invoke`: the proof was checked; allocate and run. */
  | { type: 'INVOKE'; allocation: Omit<Allocation, 'invokedAt' | 'provisionBy' | 'diskBytes'> }
  /** `/dms/job/cancel` from the contract's requester, or the provider stopping. */
  | { type: 'CANCEL'; reason: string }
  /** `/dms/job/bid-release` from the bid's requester (or the bid could not be delivered). */
  | { type: 'RELEASE'; reason: string }
  /** From the run: its inputs are staged. */
  | { type: 'STAGED'; detail: string }
  /** From the run: the container runs (started, or re-attached after a restart). */
  | { type: 'STARTED'; detail?: string }
  /** From the run: restored after a restart, its container had never started: started afresh. */
  | { type: 'AFRESH'; detail: string }
  /** From the run: it ended (or could not be attempted), with the executor's result. */
  | { type: 'RAN'; result: ExecutionResult }
  /** `/dms/job/result-again` answered: the requester has the result, so delivering it stops. */
  | { type: 'FETCHED' }

/** States in which a bid holds a reservation, a lock or a contract not yet invoked. */
export const HOLDING: ReadonlySet<BidState> = new Set(['reserved', 'locking', 'locked', 'contracted'])

/** States of an invoked bid whose result has not been delivered yet. */
export const RUNNING: ReadonlySet<BidState> = new Set([
  'allocating',
  'waiting',
  'provisioning',
  'running',
  'publishing',
  'completed',
  'failed',
  'timed_out',
  'cancelled',
])

/** The state as the allocation record shows it (before the ledger allocates: `contracted`). */
export function allocationState(state: BidState): string {
  return state === 'allocating' ? 'contracted' : state
}

/** The states an allocation reports to its requester (`/dms/job/update`) and lists in its history. */
export const ALLOCATION_STATES: ReadonlySet<string> = new Set([
  'waiting',
  'provisioning',
  'running',
  'publishing',
  'completed',
  'failed',
  'timed_out',
  'cancelled',
  'released',
])

/** The state of a bid as the 0.1 bid record named it (`offered`, `locked`, ... `invoked`). */
export function bidRecordState(
  state: BidState,
  ctx: Pick<BidContext, 'allocation' | 'history'>,
): 'offered' | 'locked' | 'contracted' | 'invoked' | 'expired' | 'released' {
  if (ctx.allocation !== undefined) return 'invoked'
  switch (state) {
    case 'reserved':
    case 'locking':
      return 'offered'
    case 'locked':
    case 'contracted':
      return state
    case 'expired':
      return 'expired'
    case 'released':
      return ctx.history.at(-2)?.state === 'expired' ? 'expired' : 'released'
    default:
      return 'released'
  }
}

/** The inputs and outputs of the machine's invoked actors (bid-actors.ts gives the real ones). */
export interface DeadlineInput {
  /** ms since the epoch */
  at: number
}
/** What the `allocate` actor answers from the ledger: the disk quota held and the GPUs, by index. */
export interface Allocated {
  diskBytes: number
  gpuIndices?: number[]
}

export interface LedgerInput {
  bidId: string
  /** The lock's deadline, kept on the ledger entry. */
  until?: number
  /** The allocation's id, kept on the entry once allocated (`dms resources` shows it). */
  allocationId?: string
}
export interface ExecuteInput {
  bidId: string
  allocation: Allocation
  requester: Handle
  /** Set when the machine was restored into `provisioning` or `running` after a restart. */
  restoredIn?: BidState
}
/** Sent to a running `execute` actor. */
export type ExecuteCommand = { type: 'CANCEL'; reason: string }
export interface HeartbeatInput {
  allocationId: string
  jobId: string
  requester: Handle
  state: BidState
}
export interface PublishInput {
  allocation: Allocation
  requester: Handle
  run: ExecutionResult
}
export interface PublishOutput {
  message: JobResult
  result: RunSummary
}
export interface DeliverInput {
  allocationId?: string
  requester: Handle
  /** The outcome's update, sent before the result (the requester keeps updates until its result). */
  update?: JobUpdate
  /** Nothing to deliver when the bid ended without a run. */
  message?: JobResult
  /** The contract the result is for: it is kept (and booked) under it before it is sent. */
  contractId?: string
}
