/**
 * What the REST API needs from the node, as small ports: the routes are built from these and never
 * see a whole node, an orchestrator, a provider or a database. The composition root
 * (dms/node-adapters.ts) implements them over the node's parts; a node without a role gets that
 * role's null object (dms/api/null-ports.ts), which answers 409. Tests pass fakes.
 */
import type { ActionView, FunctionRow, Registration, WorkerRecord } from '../functions/views.js'
import type { JobRecord } from '../orchestrator/job-record.js'
import type { JobLog, JobResult, LiveUsage } from '../protocol/messages.js'
import type { WorkflowRecord } from '../workflows/record.js'
import type { OnboardRequest } from '../resources/onboard-request.js'
import type { ResourcesView } from '../resources/onboarding.js'
import type {
  AllocationSummary,
  EarningsReply,
  InfoReply,
  JobListQuery,
  ModeView,
  NewQueueBody,
  PeerSummary,
  PruneBody,
  PruneReply,
  QueueView,
  QuoteReply,
  TopicsReply,
} from './schemas.js'

/** A job as the API shows it: its stored state and record. */
export interface JobView {
  state: string
  record: JobRecord
  /** While it runs: its provider's last usage report (never stored). */
  liveUsage?: LiveUsage & { at: number }
}

/** A job's output so far. */
export interface JobLogs {
  stdout: string
  stderr: string
  truncated: boolean
  /** A pod's output, member by member (then `stdout` and `stderr` are empty). */
  members?: Array<{ name: string; stdout: string; stderr: string; truncated: boolean }>
}

/**
 * The requester role: jobs posted here. Errors carry a stable `code`: `INVALID_JOB_SPEC` (with
 * `field`), `JOB_NOT_FOUND`, `JOB_ENDED`; the null object's is `NOT_A_REQUESTER`.
 */
export interface JobsPort {
  /** Checks `body` as a job spec (specs/job-spec.md) and starts it; resolves once it is stored. */
  post(body: unknown): Promise<JobView>
  /**
   * Checks `body` as a job spec and runs one bid round for it without locking or contracting:
   * the ranked bids (all released at once) and the declines; nothing is stored.
   */
  quote(body: unknown): Promise<QuoteReply>
  /**
   * One page of this requester's jobs, newest first, from the listing indexes (never a scan);
   * `next` is the cursor of the page after. A cursor it did not give is `INVALID_REQUEST` (400).
   */
  list(query: JobListQuery & { limit: number }): Promise<{ jobs: JobView[]; next?: string }>
  get(id: string): Promise<JobView | undefined>
  /**
   * A new job from the spec of an ended one, linked by `rerunOf` (`JOB_LIVE`, 409, while it runs);
   * it joins the old job's queue while that queue takes jobs.
   */
  rerun(id: string): Promise<JobView>
  /**
   * Deletes ended jobs past `maxAgeDays` or beyond the newest `keepLast` (each defaulting to the
   * config's `requester.retention`), with the blobs no stored job uses and their grants; never a
   * live job (specs/queues.md, "Retention").
   */
  prune(policy: PruneBody): Promise<PruneReply>
  /** Asks the job to stop; resolves with its state once the cancel is taken. */
  cancel(id: string): Promise<JobView>
  /** The live output of a job running here, else undefined. */
  /** The output so far of a running job (with `member`: that pod member's). */
  liveLogs(id: string, member?: string): JobLogs | undefined
  /** Each piece of live output, as it arrives; returns the unsubscribe function. */
  onLog(fn: (jobId: string, log: JobLog) => void): () => void
  /** Each stored change of any job; returns the unsubscribe function. */
  onChange(fn: (job: JobView) => void): () => void
}

/**
 * The requester's queues (batches of jobs; specs/queues.md). Errors: `QUEUE_NOT_FOUND` (404),
 * `QUEUE_DRAINING` / `QUEUE_ENDED` (409); the null object's is `NOT_A_REQUESTER`.
 */
export interface QueuesPort {
  create(body: NewQueueBody): Promise<QueueView>
  /** Every queue, newest first. */
  list(): Promise<QueueView[]>
  get(id: string): Promise<QueueView | undefined>
  /** Refuses new jobs from now; the queue ends `drained` with its last live job. */
  drain(id: string): Promise<QueueView>
  /** Ends the queue `cancelled` and cancels every live job of it. */
  cancel(id: string): Promise<QueueView>
}

/**
 * The provider's lifecycle mode (specs/node-lifecycle.md). A change the mode refuses is
 * `NODE_MODE_CONFLICT` (409); the null object's code is `NOT_A_PROVIDER`.
 */
export interface NodeModePort {
  view(): Promise<ModeView>
  pause(): Promise<ModeView>
  resume(): Promise<ModeView>
  /** Stops bidding; drained once no bid is live. With `stop`, the node then stops. */
  drain(opts: { stop?: boolean }): Promise<ModeView>
}

/** A workflow as the API shows it: its state and its per-task table. */
export interface WorkflowView {
  state: string
  record: WorkflowRecord
  /** Once ended: every output archive left at a provider for it was released (false: `keepOutputs`). */
  released?: boolean
}

/**
 * The requester role's workflows (specs/workflow.md). Errors carry a stable `code`:
 * `INVALID_WORKFLOW` (with `field`), `INSUFFICIENT_BALANCE` (with `data.shortfall`),
 * `WORKFLOW_NOT_FOUND`, `WORKFLOW_ENDED`; the null object's is `NOT_A_REQUESTER`.
 */
export interface WorkflowsPort {
  /** Checks `body` as a workflow document and the balance against its plan, then starts it. */
  post(body: unknown): Promise<WorkflowView>
  list(): Promise<WorkflowView[]>
  get(id: string): Promise<WorkflowView | undefined>
  /** Cancels every live task; resolves once the cancel is taken. */
  cancel(id: string): Promise<WorkflowView>
  /**
   * Fetches one task's outputs to this node (checked against its signed manifest) so the job's
   * outputs routes serve them: `TASK_NOT_FOUND`, `OUTPUTS_NOT_READY`, `OUTPUTS_RELEASED`,
   * `OUTPUTS_NOT_FETCHED`.
   */
  outputs(id: string, task: string): Promise<TaskOutputsView>
  /** Every stored change of any workflow (`GET /v1/events`); returns the unsubscribe function. */
  onChange?(fn: (wf: WorkflowView) => void): () => void
}

/**
 * The requester's workers, function table and actions (specs/functions.md). Errors carry a stable
 * `code`: `INVALID_WORKER` and `INVALID_ACTION` (400, with `field`), `TOO_MANY_WORKERS` (409),
 * `NO_WORKER` and `ACTION_NOT_FOUND` (404), and the job spec's own; the null object's is
 * `NOT_A_REQUESTER`.
 */
export interface FunctionsPort {
  /** Registers a worker descriptor once its blobs are here; otherwise answers those it lacks. */
  registerWorker(body: unknown): Promise<Registration>
  /** Every registered worker, oldest first. */
  workers(): Promise<WorkerRecord[]>
  /** The function table: function, version, build system version -> workers. */
  functions(): Promise<FunctionRow[]>
  /** Posts a batch of actions, each as a job unless the cache or a live job answers it. */
  postActions(body: unknown): Promise<ActionView[]>
  /** One action: its state, its jobs and, once verified, its outputs. */
  action(id: string): Promise<ActionView>
}

/** One task's outputs, fetched: its job, manifest and archive. */
export interface TaskOutputsView {
  task: string
  jobId: string
  files: Array<{ path: string; sha256: string; size: number }>
  archive: { sha256: string; size: number } | null
}

/** The provider role's allocations. The null object's error code is `NOT_A_PROVIDER`. */
export interface AllocationsPort {
  /** Every allocation of this provider, running and ended (any order), with its payment. */
  list(): Promise<AllocationSummary[]>
  /** The provider's books (specs/provider-books.md). */
  earnings(): Promise<EarningsReply>
  /** Each stored change of an allocation (its bid id and state); returns the unsubscribe function. */
  onChange?(fn: (id: string, state: string) => void): () => void
}

/**
 * The provider role's resources (specs/resources.md). Errors carry a stable `code`
 * (`NOT_ONBOARDED`, `OFFER_EXCEEDS_MACHINE`, `INVALID_UNIT`...); the null object's is `NOT_A_PROVIDER`.
 */
export interface ResourcesPort {
  view(opts: { refresh?: boolean }): Promise<ResourcesView>
  onboard(req: OnboardRequest): Promise<ResourcesView>
  offboard(): Promise<ResourcesView>
}

/** This node's content-addressed blobs: uploads, and the outputs fetched for its jobs. */
export interface BlobsPort {
  /** Largest blob accepted, in bytes. */
  readonly maxBlobBytes: number
  /**
   * Stores a stream under its sha256 (`declared`: its content-length, when sent). Past
   * `maxBlobBytes` it throws an error with the code `BLOB_TOO_LARGE` and its `size` and `limit`;
   * a stream that stalls, `UPLOAD_STALLED` (408); past the bytes all uploads may hold at once,
   * `UPLOADS_BUSY` (503). Each keeps nothing (dms/blobs/uploads.ts).
   */
  put(body: AsyncIterable<Uint8Array>, declared?: number): Promise<{ sha256: string; size: number }>
  /** A blob's bytes, streamed from disk; undefined when it is not here. */
  read(sha256: string): Promise<{ size: number; stream: NodeJS.ReadableStream } | undefined>
  /** Where one output file's bytes lie in a job's fetched archive; undefined when not here. */
  outputFile(
    result: JobResult,
    path: string,
  ): Promise<{ file: string; offset: number; size: number } | undefined>
}

/** The libp2p peers this node has a connection with. */
export interface PeersPort {
  /** One entry per connected peer (addresses of all its connections), any order. */
  list(): Promise<PeerSummary[]>
  /** Each peer connected or disconnected; returns the unsubscribe function. */
  onChange?(fn: (peerId: string, connected: boolean) => void): () => void
}

/**
 * The DMS gossip topics: subscribed, known from peers, and the optional ones a node may join or
 * leave (specs/queueing.md, "Topics"). Errors: `UNKNOWN_TOPIC` (400, field `body/topic`),
 * `TOPIC_NOT_OPTIONAL` and `NOT_A_REQUESTER` (409).
 */
export interface TopicsPort {
  view(): Promise<TopicsReply>
  subscribe(topic: string): Promise<TopicsReply>
  unsubscribe(topic: string): Promise<TopicsReply>
}

/** Who this node is and its receive counters (`GET /v1/info`). */
export interface InfoPort {
  info(): InfoReply
}

/** The node's metrics in the Prometheus text format. */
export interface MetricsPort {
  /** `text/plain; version=0.0.4; charset=utf-8` */
  readonly contentType: string
  /** The current values; never reads the database (counted at events). */
  render(): Promise<string>
}

/** Everything the REST API is built from. */
export interface ApiPorts {
  info: InfoPort
  peers: PeersPort
  topics: TopicsPort
  jobs: JobsPort
  queues: QueuesPort
  mode: NodeModePort
  workflows: WorkflowsPort
  functions: FunctionsPort
  allocations: AllocationsPort
  resources: ResourcesPort
  blobs: BlobsPort
  metrics: MetricsPort
}
