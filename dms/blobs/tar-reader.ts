/**
 * Reads an output archive (tar.ts) from its file without loading it: headers are read one block at
 * a time, bodies are skipped or hashed through one reusable buffer. Strict: see tar.ts.
 */
import { createHash } from 'node:crypto'
import { promises as fs } from 'node:fs'
import {
  BLOCK,
  checkRelativePath,
  MAX_PAX_BYTES,
  paddingOf,
  parseHeader,
  parsePax,
  TarFormatError,
} from '../workload/tar.js'

/** One regular file in an archive: where its bytes are. */
export interface TarEntry {
  path: string
  size: number
  /** Byte offset of the content in the archive file. */
  offset: number
}

/**
 * The archive's files, in archive order. Throws TarFormatError (while iterating) on a bad header,
 * an entry that is not a regular file, an unsafe path, a body past the end of the file, or a
 * missing end-of-archive marker.
 */
export async function* tarEntries(handle: fs.FileHandle): AsyncGenerator<TarEntry> {
  const { size: fileSize } = await handle.stat()
  const block = Buffer.alloc(BLOCK)
  let offset = 0
  let paxPath: string | undefined
  while (offset + BLOCK <= fileSize) {
    await readExactly(handle, block, offset)
    const h = parseHeader(block, offset)
    if (h.end) return
    const start = offset + BLOCK
    if (start + h.size > fileSize) throw new TarFormatError(`entry at byte ${offset} runs past the end`)
    offset = start + h.size + paddingOf(h.size)
    if (h.type === 'pax') {
      if (h.size > MAX_PAX_BYTES) throw new TarFormatError(`PAX header of ${h.size} bytes is too large`)
      const body = Buffer.alloc(h.size)
      await readExactly(handle, body, start)
      paxPath = parsePax(body).path
      continue
    }
    const path = paxPath ?? h.path
    paxPath = undefined
    checkRelativePath(path)
    yield { path, size: h.size, offset: start }
  }
  throw new TarFormatError('no end-of-archive marker')
}

/** sha256 (hex) of `size` bytes at `offset`, read through `buf`. */
export async function hashRange(
  handle: fs.FileHandle,
  offset: number,
  size: number,
  buf: Buffer = Buffer.allocUnsafe(1024 * 1024),
): Promise<string> {
  const hash = createHash('sha256')
  let done = 0
  while (done < size) {
    const want = Math.min(buf.length, size - done)
    const { bytesRead } = await handle.read(buf, 0, want, offset + done)
    if (bytesRead === 0) throw new TarFormatError(`entry at byte ${offset} runs past the end`)
    hash.update(buf.subarray(0, bytesRead))
    done += bytesRead
  }
  return hash.digest('hex')
}

/** The entry for `path` in the archive `file`, or undefined. Reads headers only. */
export async function findTarEntry(file: string, path: string): Promise<TarEntry | undefined> {
  const handle = await fs.open(file, 'r')
  try {
    for await (const entry of tarEntries(handle)) if (entry.path === path) return entry
    return undefined
  } finally {
    await handle.close()
  }
}

async function readExactly(handle: fs.FileHandle, buf: Buffer, position: number): Promise<void> {
  let done = 0
  while (done < buf.length) {
    const { bytesRead } = await handle.read(buf, done, buf.length - done, position + done)
    if (bytesRead === 0) throw new TarFormatError(`archive ends inside a header at byte ${position}`)
    done += bytesRead
  }
}
