/**
 * The functions' records and views, as stored and as the REST API shows them (specs/functions.md):
 * shapes only, which the API's ports name.
 */
import type { ActionDescriptor, ActionId } from './action.js'
import type { BlobRef } from './names.js'
import type { WorkerDescriptor, WorkerId } from './worker.js'

/** A registered worker, as stored. */
export interface WorkerRecord {
  v: 1
  id: WorkerId
  descriptor: WorkerDescriptor
  registeredAt: number
}

/** What `register` answers: registered, or the blobs still missing. */
export interface Registration {
  id: WorkerId
  registered: boolean
  /** Registered by this call (false: it already was, or is not yet). */
  created: boolean
  /** The blobs this node lacks, each once: upload them, then register again. */
  needs: BlobRef[]
}

/** One row of the function table: a function at a version, for a build system, and its workers. */
export interface FunctionRow {
  function: string
  version: string
  buildSystemVersion: string
  workers: WorkerId[]
}

/** An action as stored. */
export interface ActionRecord {
  v: 1
  id: ActionId
  descriptor: ActionDescriptor
  worker: WorkerId
  /** Its jobs, oldest first: a failed one is followed by the next post's. */
  jobs: string[]
  postedAt: number
}

/** The states an action shows: its last job's, with `completed` only once that job is verified. */
export type ActionState = 'running' | 'completed' | 'failed' | 'cancelled'

/** An action as the API shows it. */
export interface ActionView {
  id: ActionId
  state: ActionState
  function: string
  version: string
  buildSystemVersion: string
  worker: WorkerId
  jobId: string
  jobState: string
  jobs: string[]
  /** This post answered a verified result and ran nothing. */
  cached?: boolean
  /** Once completed: the outputs by content hash, from the signed manifest. */
  outputs?: Array<{ path: string; sha256: string; size: number }>
  error?: { code: string; message: string }
  /**
   * `GET /v1/actions/:id` only: when it was first posted, then each state of its jobs (the newest
   * 20) with its time, oldest first.
   */
  history?: ActionHistoryEntry[]
}

/** One state of an action with its time: `posted`, then its jobs' states (`jobId`). */
export interface ActionHistoryEntry {
  state: string
  at: number
  jobId?: string
}

/** Cache hits and misses, since the node started. */
export interface ActionCounts {
  hits: number
  misses: number
  joined: number
}
