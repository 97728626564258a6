/**
 * Hand-offs (specs/workflow.md, "Hand-offs"): a task's `from` inputs become input blobs of its
 * job, taken from its upstreams' output archives. A completed upstream's archive is on this node
 * and was checked file by file against the manifest its provider's signed receipt covers (the
 * verify step), so every byte handed on is hash-checked; the downstream provider fetches the
 * blobs from this node as for any input.
 */
import { createReadStream, promises as fs } from 'node:fs'
import { DmsError } from '../../actors/errors.js'
import type { BlobStore } from '../blobs/store.js'
import { findTarEntry, tarEntries } from '../blobs/tar-reader.js'
import type { InputSpec } from '../orchestrator/job-spec.js'
import type { JobResult } from '../protocol/messages.js'
import type { FromTask } from './document.js'

export class HandoffError extends DmsError {
  constructor(message: string) {
    super('HANDOFF_FAILED', message)
  }
}

/** Stores `size` bytes of `file` at `offset` as a blob. */
async function blobOfRange(store: BlobStore, file: string, offset: number, size: number): Promise<string> {
  const stream = size === 0 ? [] : createReadStream(file, { start: offset, end: offset + size - 1 })
  return (await store.putStream(stream as AsyncIterable<Uint8Array>)).sha256
}

/**
 * The input files `from` takes from its upstream's checked result: one file at `as`, or every file
 * of the archive under `as/`. Throws HandoffError naming what is missing.
 */
export async function handOff(
  store: BlobStore,
  from: FromTask,
  result: JobResult | undefined,
): Promise<InputSpec[]> {
  const archive = result?.archive
  const file = archive === undefined ? undefined : store.path(archive.sha256)
  if (file === undefined || !(await store.has(archive?.sha256 ?? ''))) {
    if (from.path === undefined && (result?.outputs ?? []).length === 0) return []
    throw new HandoffError(`${from.fromTask} left no output archive on this node`)
  }
  if (from.path !== undefined) {
    const entry = await findTarEntry(file, from.path)
    if (entry === undefined) throw new HandoffError(`${from.fromTask} did not write ${from.path}`)
    return [
      { path: from.as, sha256: await blobOfRange(store, file, entry.offset, entry.size), size: entry.size },
    ]
  }
  const out: InputSpec[] = []
  const handle = await fs.open(file, 'r')
  try {
    for await (const e of tarEntries(handle))
      out.push({
        path: `${from.as}/${e.path}`,
        sha256: await blobOfRange(store, file, e.offset, e.size),
        size: e.size,
      })
  } finally {
    await handle.close()
  }
  return out
}
