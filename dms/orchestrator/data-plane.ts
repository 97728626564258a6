/**
 * The requester's side of the data plane (specs/data-plane.md): a job's inputs become blobs it
 * grants to the provider; a result's outputs are fetched as one archive from the provider and
 * checked file by file against the manifest the receipt's outputsHash covers.
 */
import type { Actor } from '../../actors/actor.js'
import { fetchAndCheckOutputs, type OutputsCheck, type OutputsFetchOptions } from '../blobs/outputs-check.js'
import type { BlobService } from '../blobs/service.js'
import type { InputFile, InputSource } from '../blobs/staging.js'
import type { KeyPair } from '../../actors/identity.js'
import { BLOB_GRANT_TTL_MS, signBlobGrant } from '../contracts/blob-grant.js'
import { findTarEntry } from '../blobs/tar-reader.js'
import { blobsHandle } from '../blobs/transfer.js'
import { W } from '../protocol/behaviours.js'
import type { JobResult } from '../protocol/messages.js'
import { inputsSizeProblem } from '../workload/run-rules.js'
import { InvalidJobSpecError, type InputSpec } from './job-spec.js'

export { fetchAndCheckOutputs, type OutputsCheck, type OutputsFetchOptions }

/**
 * Turns a parsed spec's inputs into blobs: inline content is stored; a `sha256` must name a blob
 * already in this node's store (uploaded with PUT /v1/blobs), or the spec is refused naming it.
 * Together they must fit the job's disk (the provider's rule). Everything is checked before the
 * first inline blob is stored, so a refused spec leaves nothing behind.
 */
export async function resolveInputs(
  blobs: BlobService,
  inputs: InputSpec[] | undefined,
  diskBytes = 0,
): Promise<JobInput[]> {
  const checked: Array<{
    path: string
    sha256?: string
    data?: Buffer
    size: number
    source?: InputSpec['source']
  }> = []
  for (const [i, f] of (inputs ?? []).entries()) {
    // A hand-off from another provider: its id and size come from that provider's signed manifest.
    if (f.source !== undefined && f.sha256 !== undefined && f.size !== undefined) {
      checked.push({ path: f.path, sha256: f.sha256, size: f.size, source: f.source })
      continue
    }
    if (f.contentBase64 !== undefined) {
      const data = Buffer.from(f.contentBase64, 'base64')
      checked.push({ path: f.path, data, size: data.length })
      continue
    }
    const size = f.sha256 === undefined ? undefined : await blobs.store.size(f.sha256)
    if (f.sha256 === undefined || size === undefined) {
      throw new InvalidJobSpecError(
        `inputs.${i}.sha256`,
        `blob ${f.sha256 ?? '(none)'} is not on this node: upload it first with PUT /v1/blobs`,
      )
    }
    checked.push({ path: f.path, sha256: f.sha256, size })
  }
  const tooLarge = inputsSizeProblem(
    checked.map((f) => f.size),
    diskBytes,
  )
  if (tooLarge !== undefined) throw new InvalidJobSpecError('inputs', tooLarge)
  const out: JobInput[] = []
  for (const f of checked)
    out.push({
      path: f.path,
      sha256: f.sha256 ?? (await blobs.store.put(f.data as Buffer)),
      size: f.size,
      ...(f.source !== undefined ? { source: f.source } : {}),
    })
  return out
}

/** A job's input as stored: a blob of this node, or a hand-off whose grant is not signed yet. */
export type JobInput = Omit<InputFile, 'source'> & { source?: Omit<InputSource, 'grant'> }

/** Signs this node's delegations (its node key, its peer id). */
export interface GrantSigner {
  key: KeyPair
  peerId: string
  now(): number
}

/**
 * Lets the provider fetch the job's input blobs from this node, and signs it a delegated grant for
 * each hand-off (the upstream provider granted its archive to this node); returns the inputs as
 * the invocation carries them.
 */
export async function grantInputs(
  blobs: BlobService,
  signer: GrantSigner,
  provider: string,
  inputs: JobInput[],
): Promise<InputFile[]> {
  const out: InputFile[] = []
  for (const f of inputs) {
    if (f.source === undefined) {
      await blobs.grant(provider, f.sha256)
      out.push(f as InputFile)
      continue
    }
    const grant = signBlobGrant(signer.key, {
      sha256: f.source.archive,
      owner: signer.peerId,
      grantee: provider,
      expiresAt: signer.now() + BLOB_GRANT_TTL_MS,
    })
    out.push({ ...f, source: { ...f.source, grant } })
  }
  return out
}

/** How long a provider has to answer a release. */
const RELEASE_TIMEOUT_MS = 10_000

/** A job's side of the data plane, as its steps use it. */
export interface JobBlobs {
  /** Grants the provider the job's inputs (`grantInputs`); resolves with them as invoked. */
  grant(provider: string, inputs: JobInput[]): Promise<InputFile[]>
  /** Fetches the result's output archive from the provider and checks it (`fetchAndCheckOutputs`). */
  fetchOutputs(
    provider: { peer: string; addrs: string[] },
    result: JobResult,
    opts: OutputsFetchOptions,
  ): Promise<OutputsCheck>
  /**
   * Tells the provider this node no longer needs job `jobId`'s archive there
   * (`/dms/blob/release`): fetched and checked, or refused. Best effort: the provider releases it
   * at its deadline anyway (specs/data-plane.md, "Archives kept by the provider").
   */
  release?(provider: { peer: string; addrs: string[] }, sha256: string, jobId: string): Promise<void>
}

export type FetchOutputsOptions = OutputsFetchOptions

/** The data plane of a job whose actor is `actor` (archives are fetched as it). */
export function jobBlobsOf(actor: Actor, blobs: BlobService, signer: GrantSigner): JobBlobs {
  return {
    grant: (provider, inputs) => grantInputs(blobs, signer, provider, inputs),
    fetchOutputs: (provider, result, opts) => fetchAndCheckOutputs(actor, blobs, provider, result, opts),
    release: async (provider, sha256, jobId) => {
      await actor.request(
        blobsHandle(provider.peer, provider.addrs),
        W.blobRelease,
        { sha256, jobId },
        { timeoutMs: RELEASE_TIMEOUT_MS },
      )
    },
  }
}

/**
 * Where one output file's bytes are in the fetched archive (to be streamed from disk), or undefined
 * when there is no such file or the archive is not here.
 */
export async function locateOutputFile(
  blobs: BlobService,
  result: JobResult,
  path: string,
): Promise<{ file: string; offset: number; size: number } | undefined> {
  if (result.archive === undefined || !(await blobs.store.has(result.archive.sha256))) return undefined
  const file = blobs.store.path(result.archive.sha256)
  const entry = await findTarEntry(file, path)
  return entry === undefined ? undefined : { file, offset: entry.offset, size: entry.size }
}
