/**
 * The check of a run's outputs against the provider's signed receipt, the same for every party
 * that makes it: the requester (its `verifying` step) and the contract-db (when it arbitrates a
 * rejected result, specs/contract-db.md "Rejections"). The archive is fetched from the provider in
 * chunks and checked file by file against the manifest that the receipt's outputsHash covers.
 * Spec: specs/data-plane.md.
 */
import { promises as fs } from 'node:fs'
import type { Actor } from '../../actors/actor.js'
import { hashOutputs } from '../workload/outputs.js'
import type { JobResult, OutputEntry } from '../protocol/messages.js'
import { outputsSizeProblem } from '../workload/run-rules.js'
import type { BlobService } from './service.js'
import { archiveSizeOf } from '../workload/tar.js'
import { hashRange, tarEntries } from './tar-reader.js'
import { blobsHandle, fetchBlobs, type FetchOptions } from './transfer.js'

export type OutputsCheck = { ok: true } | { ok: false; reason: string }

/** How a result's archive is fetched: the job's disk bounds it, the deadline bounds the fetch. */
export type OutputsFetchOptions = FetchOptions & {
  /** The job's disk (`resources.disk`; 0: none given). */
  diskBytes?: number
  /** false: check the manifest against the receipt only; the archive stays with the provider. */
  download?: boolean
}

/**
 * Fetches the result's archive from the provider (unless this node has it), then checks: the
 * archive hashes to its id, it holds exactly the manifest's files with their sizes and hashes, and
 * the manifest hashes to the receipt's outputsHash. Before fetching anything: the manifest's files
 * must fit the job's disk and the archive must be exactly the size their archive has, so an
 * announced size cannot ask for more than the run could have written. A fetch not done by the
 * deadline (or with a short chunk) is a failed check. A failed check is a reason, not a throw.
 */
export async function fetchAndCheckOutputs(
  actor: Actor,
  blobs: BlobService,
  provider: { peer: string; addrs: string[] },
  result: JobResult,
  opts: OutputsFetchOptions = {},
): Promise<OutputsCheck> {
  const manifest = result.outputs ?? []
  if (hashOutputs(manifest) !== result.receipt?.receipt?.outputsHash) {
    return { ok: false, reason: 'the manifest does not hash to the receipt outputsHash' }
  }
  // Handed on provider to provider: each downstream provider checks the files against this manifest.
  if (opts.download === false) return { ok: true }
  if (result.archive === undefined) {
    return manifest.length === 0 ? { ok: true } : { ok: false, reason: 'outputs listed but no archive' }
  }
  const tooLarge = outputsSizeProblem(
    manifest.map((m) => m.size),
    opts.diskBytes ?? 0,
  )
  if (tooLarge !== undefined) return { ok: false, reason: tooLarge }
  let expected: number
  try {
    expected = archiveSizeOf(manifest)
  } catch (err) {
    return { ok: false, reason: (err as Error).message }
  }
  if (result.archive.size !== expected) {
    return {
      ok: false,
      reason: `archive of ${result.archive.size} bytes announced, the manifest's files make ${expected}`,
    }
  }
  let fetched: string[]
  try {
    // A fetch that fails keeps nothing: its partial file is dropped (BlobService.fetchMissing).
    fetched = await fetchBlobs(
      actor,
      blobs,
      blobsHandle(provider.peer, provider.addrs),
      [result.archive],
      opts,
    )
  } catch (err) {
    return { ok: false, reason: `archive not fetched: ${(err as Error).message}` }
  }
  const sha256 = result.archive.sha256
  const check = await checkArchive(blobs.store.path(sha256), manifest).catch(
    (err: unknown): OutputsCheck => ({ ok: false, reason: (err as Error).message }),
  )
  // An archive this fetch brought that does not match its signed manifest is not kept: a rogue
  // provider must not leave bytes in this node's store (issue 29). Bytes that were here already
  // (another job's verified outputs) stay.
  if (!check.ok && fetched.includes(sha256)) await blobs.store.delete(sha256).catch(() => undefined)
  return check
}

/**
 * Walks the archive file once, hashing each file's bytes from disk: it must hold exactly the
 * manifest's files, in path order, with their sizes and hashes. Memory: one read buffer.
 */
async function checkArchive(file: string, manifest: OutputEntry[]): Promise<OutputsCheck> {
  const want = [...manifest].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const twice = want.find((m, i) => i > 0 && want[i - 1].path === m.path)
  if (twice !== undefined) return { ok: false, reason: `the manifest lists ${twice.path} twice` }
  const buf = Buffer.allocUnsafe(1024 * 1024)
  const handle = await fs.open(file, 'r')
  try {
    let i = 0
    for await (const entry of tarEntries(handle)) {
      const m = want[i++]
      if (m === undefined)
        return { ok: false, reason: `the archive holds more files than the manifest's ${manifest.length}` }
      if (entry.path !== m.path)
        return {
          ok: false,
          reason: `${m.path} is missing from the archive (found ${JSON.stringify(entry.path)})`,
        }
      if (entry.size !== m.size || (await hashRange(handle, entry.offset, entry.size, buf)) !== m.sha256) {
        return { ok: false, reason: `${m.path} in the archive does not match its manifest entry` }
      }
    }
    if (i !== want.length)
      return { ok: false, reason: `archive holds ${i} files, the manifest lists ${manifest.length}` }
    return { ok: true }
  } finally {
    await handle.close()
  }
}
