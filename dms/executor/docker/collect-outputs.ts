import { constants, promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { OutputFile } from '../executor.js'
import { sha256Hex } from '../outputs.js'

export interface CollectLimits {
  /** Max total content bytes. */
  maxBytes: number
  /** Max number of files. */
  maxFiles: number
}

export type CollectResult = { ok: true; files: OutputFile[] } | { ok: false; reason: string; files: [] }

/**
 * Reads every regular file under `dir` (the host side of a container's /outputs), sorted by path.
 *
 * The folder was written by untrusted code: symlinks, FIFOs, sockets and devices are skipped, never
 * followed or opened (a symlink to /etc/shadow must not be read by this process), and files are
 * opened with O_NOFOLLOW. The limits are checked from sizes before content is read.
 */
export async function collectOutputs(dir: string, limits: CollectLimits): Promise<CollectResult> {
  const files: OutputFile[] = []
  let total = 0
  // Iterative walk: a deeply nested tree must not exhaust the stack.
  const pending: string[] = ['']
  while (pending.length > 0) {
    const rel = pending.pop() as string
    let entries
    try {
      entries = await fs.readdir(join(dir, rel), { withFileTypes: true })
    } catch (err) {
      if (rel === '' && (err as NodeJS.ErrnoException).code === 'ENOENT') break
      throw err
    }
    for (const entry of entries) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`
      if (entry.isDirectory()) {
        pending.push(path)
        continue
      }
      if (!entry.isFile()) continue
      if (files.length >= limits.maxFiles) return overflow(`outputs exceed ${limits.maxFiles} files`)
      const handle = await fs.open(join(dir, path), constants.O_RDONLY | constants.O_NOFOLLOW)
      try {
        const { size } = await handle.stat()
        total += size
        if (total > limits.maxBytes) return overflow(`outputs exceed ${limits.maxBytes} bytes`)
        const content = await handle.readFile()
        files.push({
          path,
          sha256: sha256Hex(content),
          size: content.length,
          content,
        })
      } finally {
        await handle.close()
      }
    }
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return { ok: true, files }
}

function overflow(reason: string): CollectResult {
  return { ok: false, reason, files: [] }
}
