/**
 * Output archives for tests, through the real streaming writer and reader (dms/workload/tar-writer.ts, dms/blobs/tar-reader.ts):
 * small in-memory files go in through temp files, and come back out as buffers.
 */
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { TarFileWriter, type WrittenArchive } from '../../dms/workload/tar-writer.js'
import { tarEntries } from '../../dms/blobs/tar-reader.js'

export interface MemFile {
  path: string
  content: Buffer
}

/** Writes `files` (sorted here) as the archive `file`; their contents are staged in `file`.src/. */
export async function tarOf(file: string, files: MemFile[]): Promise<WrittenArchive & { hashes: string[] }> {
  const src = `${file}.src`
  await fs.mkdir(src, { recursive: true })
  const writer = await TarFileWriter.create(file)
  const hashes: string[] = []
  try {
    const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    for (const [i, f] of sorted.entries()) {
      await fs.writeFile(join(src, String(i)), f.content)
      const handle = await fs.open(join(src, String(i)), 'r')
      try {
        hashes.push(await writer.addFile(f.path, f.content.length, handle))
      } finally {
        await handle.close()
      }
    }
    return { ...(await writer.finish()), hashes }
  } catch (err) {
    await writer.abort()
    throw err
  } finally {
    await fs.rm(src, { recursive: true, force: true })
  }
}

/** Every file of the archive `file`, with its content. */
export async function untar(file: string): Promise<MemFile[]> {
  const handle = await fs.open(file, 'r')
  try {
    const out: MemFile[] = []
    for await (const e of tarEntries(handle)) {
      const content = Buffer.alloc(e.size)
      if (e.size > 0) await handle.read(content, 0, e.size, e.offset)
      out.push({ path: e.path, content })
    }
    return out
  } finally {
    await handle.close()
  }
}
