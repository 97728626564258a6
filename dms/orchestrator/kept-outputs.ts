/**
 * Outputs left at the provider, fetched on demand (specs/workflow.md, "Outputs on demand"): a job
 * run with `outputsStay` (a workflow task whose outputs are handed on) had only its manifest
 * checked; this fetches its archive from the provider under the grant the provider gave this node
 * when it published the result, and checks it file by file exactly as the verify step does
 * (data-plane.ts). Once here, the job's outputs routes serve it like any job's.
 */
import { randomUUID } from 'node:crypto'
import type { Clock } from '../../actors/clock.js'
import { DmsError, isCode } from '../../actors/errors.js'
import { KeyPair } from '../../actors/identity.js'
import type { ActorSystem } from '../../actors/system.js'
import type { BlobService } from '../blobs/service.js'
import { blobsHandle, transferBudgetMs, type TransferPace } from '../blobs/transfer.js'
import { W } from '../protocol/behaviours.js'
import type { JobResult, OutputArchive, OutputEntry } from '../protocol/messages.js'
import { fetchAndCheckOutputs } from './data-plane.js'
import type { StoredJob } from './job-store.js'

/** The job has no outputs to fetch yet: it did not complete with a result. */
export class OutputsNotReadyError extends DmsError {
  readonly statusCode = 409
  constructor(id: string, state: string) {
    super('OUTPUTS_NOT_READY', `job ${id} is ${state}: only a completed job's outputs can be fetched`)
  }
}

/** The archive could not be fetched or did not match the signed manifest. */
export class OutputsFetchError extends DmsError {
  readonly statusCode = 502
  constructor(id: string, reason: string) {
    super('OUTPUTS_NOT_FETCHED', `the outputs of job ${id} were not fetched: ${reason}`)
  }
}

export interface KeptOutputsDeps {
  system: Pick<ActorSystem, 'spawn' | 'despawn'>
  blobs: BlobService
  clock: Clock
  get(id: string): Promise<StoredJob | undefined>
  /** Per-chunk request timeout. */
  requestTimeoutMs: number
  /** The slowest transfer accepted (as for a job's outputs in `verifying`). */
  pace: TransferPace
  /**
   * Runs `task` alone for archive `sha256`: fetches of the same bytes for two jobs (two
   * providers, one of them maybe lying) must not interleave, or a failed check could delete a
   * blob the other fetch has just verified. `KeptOutputs` passes its own; none when absent.
   */
  oneAtATime?: <T>(sha256: string, task: () => Promise<T>) => Promise<T>
}

/** A job's outputs as fetched: the manifest and the archive, now in this node's store. */
export interface FetchedOutputs {
  jobId: string
  files: OutputEntry[]
  archive: OutputArchive | null
}

/**
 * `fetchKeptOutputs` and `releaseKeptOutputs` over one set of deps; two asks for the same job's
 * outputs at once share one fetch.
 */
export class KeptOutputs {
  private readonly fetching = new Map<string, Promise<FetchedOutputs>>()
  /** Per archive sha256: the tail of the fetches queued for it (removed once they all ended). */
  private readonly byArchive = new Map<string, Promise<unknown>>()
  constructor(private readonly d: KeptOutputsDeps) {}

  fetch(id: string): Promise<FetchedOutputs> {
    const running = this.fetching.get(id)
    if (running !== undefined) return running
    const oneAtATime = <T>(sha256: string, task: () => Promise<T>): Promise<T> => {
      const before = this.byArchive.get(sha256) ?? Promise.resolve()
      const mine = before.then(task, task)
      const tail = mine.catch(() => undefined)
      this.byArchive.set(sha256, tail)
      void tail.then(() => {
        if (this.byArchive.get(sha256) === tail) this.byArchive.delete(sha256)
      })
      return mine
    }
    const p = fetchKeptOutputs({ ...this.d, oneAtATime }, id).finally(() => this.fetching.delete(id))
    this.fetching.set(id, p)
    return p
  }

  release(id: string): Promise<boolean> {
    return releaseKeptOutputs(this.d, id)
  }
}

/**
 * Fetches a completed job's archive into this node's store (nothing to do when it is here
 * already) and checks it against the manifest its provider signed. Throws `JOB_NOT_FOUND`,
 * `OUTPUTS_NOT_READY` or `OUTPUTS_NOT_FETCHED` (with the check's reason).
 */
export async function fetchKeptOutputs(
  d: KeptOutputsDeps,
  id: string,
  signal?: AbortSignal,
): Promise<FetchedOutputs> {
  const job = await d.get(id)
  if (job === undefined) throw new DmsError('JOB_NOT_FOUND', `no job ${id}`)
  const r = job.record
  const provider = r.winner?.provider
  if (job.state !== 'completed' || r.result === undefined || provider === undefined)
    throw new OutputsNotReadyError(id, job.state)
  const result = r.result
  const archive = result.archive
  const run = () => fetchAndCheck(d, id, r, provider, result, signal)
  return archive === undefined || d.oneAtATime === undefined ? run() : d.oneAtATime(archive.sha256, run)
}

async function fetchAndCheck(
  d: KeptOutputsDeps,
  id: string,
  r: StoredJob['record'],
  provider: string,
  result: JobResult,
  signal?: AbortSignal,
): Promise<FetchedOutputs> {
  const archive = result.archive
  // Checked even when the blob is here (another job's outputs may be the same bytes): the check
  // fetches only what is missing, and drops what it fetched when it does not match.
  // An actor of its own for the fetch: the provider granted the archive to this node (its peer).
  const actor = d.system.spawn(`outputs/${id}/${randomUUID()}`, KeyPair.generate())
  try {
    const budgetMs = transferBudgetMs(archive?.size ?? 0, d.pace)
    const check = await fetchAndCheckOutputs(
      actor,
      d.blobs,
      { peer: provider, addrs: r.providerAddrs?.[provider] ?? [] },
      result,
      {
        signal,
        timeoutMs: d.requestTimeoutMs,
        deadline: { at: d.clock.now() + budgetMs, clock: d.clock, budgetMs },
        diskBytes: r.spec.resources.diskBytes,
      },
    )
    if (!check.ok) throw new OutputsFetchError(id, check.reason)
    return { jobId: id, files: result.outputs, archive: archive ?? null }
  } finally {
    d.system.despawn(actor)
  }
}

/** How long the provider has to answer a release. */
const RELEASE_TIMEOUT_MS = 10_000

/**
 * Tells the provider of a job run with `outputsStay` that its output archive is no longer needed
 * (`/dms/blob/release`): the provider revokes this node's grant and deletes the archive. Resolves
 * true when the provider holds no grant on it for this node any more (released now or before),
 * false when there was nothing to release; throws when the provider did not answer.
 */
export async function releaseKeptOutputs(
  d: Pick<KeptOutputsDeps, 'system' | 'get'>,
  id: string,
): Promise<boolean> {
  const job = await d.get(id)
  const r = job?.record
  const provider = r?.winner?.provider
  const archive = r?.result?.archive
  if (r === undefined || r.spec.outputsStay !== true || provider === undefined || archive === undefined)
    return false
  const actor = d.system.spawn(`release/${id}/${randomUUID()}`, KeyPair.generate())
  try {
    await actor.request(
      blobsHandle(provider, r.providerAddrs?.[provider] ?? []),
      W.blobRelease,
      { sha256: archive.sha256, jobId: id },
      { timeoutMs: RELEASE_TIMEOUT_MS },
    )
    return true
  } catch (err) {
    // Released before (a restart between the release and its record): nothing is held any more.
    if (isCode(err, 'BLOB_NOT_GRANTED')) return true
    throw err
  } finally {
    d.system.despawn(actor)
  }
}
