/**
 * Inputs taken from another provider's output archive (a workflow's hand-off, specs/workflow.md):
 * the archive is fetched from the provider holding it under the requester's delegated grant (each
 * chunk hashed into the store, which refuses it unless it hashes to its id), then each file is
 * cut out of it into a blob that must hash to the input's id, the hash the upstream's signed
 * manifest lists. Memory: one stream at a time.
 */
import { createReadStream } from 'node:fs'
import type { Actor } from '../../actors/system.js'
import { DmsError } from '../../actors/errors.js'
import type { BlobService } from './service.js'
import type { InputFile } from './staging.js'
import { findTarEntry } from './tar-reader.js'
import { blobsHandle, fetchBlobs } from './transfer.js'

/** A handed-on file is missing from its archive, or is not the file the requester named. */
export class HandoffMismatchError extends DmsError {
  constructor(message: string) {
    super('HANDOFF_MISMATCH', message)
  }
}

/**
 * Makes every input with a `source` a blob of the local store; returns how many archives were
 * fetched. Inputs already in the store are left alone.
 */
export async function fetchSourcedInputs(
  actor: Actor,
  blobs: BlobService,
  inputs: InputFile[],
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<number> {
  let fetched = 0
  for (const f of inputs) {
    const s = f.source
    if (s === undefined || (await blobs.store.has(f.sha256))) continue
    fetched += (
      await fetchBlobs(
        actor,
        blobs,
        blobsHandle(s.peer, s.addrs),
        [{ sha256: s.archive, size: s.archiveSize }],
        {
          ...opts,
          grant: s.grant,
        },
      )
    ).length
    const file = blobs.store.path(s.archive)
    const entry = await findTarEntry(file, s.entry)
    if (entry === undefined) throw new HandoffMismatchError(`${s.entry} is not in archive ${s.archive}`)
    const stream =
      entry.size === 0
        ? []
        : createReadStream(file, { start: entry.offset, end: entry.offset + entry.size - 1 })
    const got = await blobs.store.putStream(stream as AsyncIterable<Uint8Array>)
    if (got.sha256 !== f.sha256 || got.size !== f.size)
      throw new HandoffMismatchError(
        `${s.entry} of archive ${s.archive} is not the file ${f.sha256} the requester named`,
      )
  }
  return fetched
}
