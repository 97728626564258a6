/**
 * Collects a finished container's /outputs (the host folder `dir`) into one deterministic tar file,
 * streamed from disk to disk and hashed as it is written (dms/workload/tar-writer.ts), with each
 * file's sha256 for the manifest. No file's content is ever held in memory.
 *
 * The folder was written by untrusted code:
 * - symlinks, FIFOs, sockets and devices are never followed or opened, and files are opened with
 *   O_NOFOLLOW | O_NONBLOCK (a symlink to /etc/shadow must not be read by this process);
 * - entries that cannot be named or read (a name that is not UTF-8, a path longer than the host's
 *   PATH_MAX, a file that cannot be opened) are skipped and counted, with a few names, escaped;
 * - the limits are checked from sizes before any content is read; outputs over a limit are
 *   refused as a whole.
 *
 * It never rejects: whatever goes wrong becomes a `refused` reason, so collection can never erase
 * the run it collects (status, exit code, usage and logs are the caller's and stay as they are).
 */
import { isUtf8 } from 'node:buffer'
import { constants, promises as fs, type Dir } from 'node:fs'
import { TarFileWriter } from '../../workload/tar-writer.js'
import type { OutputFile, OutputsArchive, OutputsSkipped } from '../executor.js'
import { SkipTally } from '../skipped.js'

export interface CollectLimits {
  /** Max total content bytes. */
  maxBytes: number
  /** Max number of files. */
  maxFiles: number
  /** Max entries looked at (files, folders and skipped entries). @default 10 × maxFiles */
  maxEntries?: number
}

export interface Collected {
  /** The manifest, sorted by path; empty when refused. */
  files: OutputFile[]
  /** The tar holding `files`; present exactly when `files` is not empty. */
  archive?: OutputsArchive
  /** Entries left out, with why. */
  skipped?: OutputsSkipped
  /** Why the outputs were refused as a whole (over a limit, or not archivable). */
  refused?: string
}

/** A regular file found by the walk. */
interface Found {
  path: string
  host: Buffer
}

const SLASH = Buffer.from('/')

/**
 * Collects the regular files under `dir` into the tar file `archiveFile` (created; must not exist).
 * `ignore`: a name at the top of `dir` left out unseen (a pod's shared scratch folder).
 */
export async function collectOutputs(
  dir: string,
  archiveFile: string,
  limits: CollectLimits,
  ignore?: string,
): Promise<Collected> {
  const tally = new SkipTally()
  const done = (c: Omit<Collected, 'skipped'>): Collected => {
    const skipped = tally.result()
    return skipped === undefined ? c : { ...c, skipped }
  }
  let found: Found[]
  try {
    const walked = await walk(Buffer.from(dir), limits, tally, ignore)
    if (typeof walked === 'string') return done({ files: [], refused: walked })
    found = walked
  } catch (err) {
    return done({ files: [], refused: `outputs could not be collected: ${errorText(err)}` })
  }
  if (found.length === 0) return done({ files: [] })
  found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))

  let writer: TarFileWriter | undefined
  try {
    writer = await TarFileWriter.create(archiveFile)
    const files: OutputFile[] = []
    let total = 0
    for (const f of found) {
      let handle: fs.FileHandle
      try {
        handle = await fs.open(f.host, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
      } catch (err) {
        tally.add(reasonOf(err), Buffer.from(f.path))
        continue
      }
      try {
        const stat = await handle.stat()
        if (!stat.isFile()) {
          tally.add('not a regular file or folder', Buffer.from(f.path))
          continue
        }
        total += stat.size
        if (total > limits.maxBytes) {
          await writer.abort()
          return done({ files: [], refused: `outputs exceed ${limits.maxBytes} bytes` })
        }
        const sha256 = await writer.addFile(f.path, stat.size, handle)
        files.push({ path: f.path, sha256, size: stat.size })
      } finally {
        await handle.close()
      }
    }
    if (files.length === 0) {
      await writer.abort()
      return done({ files: [] })
    }
    return done({ files, archive: await writer.finish() })
  } catch (err) {
    await writer?.abort().catch(() => {})
    return done({ files: [], refused: `outputs could not be archived: ${errorText(err)}` })
  }
}

/**
 * The regular files under `root`, or why the outputs are refused. Iterative, so a deeply nested
 * tree cannot exhaust the stack; folders are read one entry at a time, so a huge one cannot
 * exhaust memory before the entry limit stops it.
 */
async function walk(
  root: Buffer,
  limits: CollectLimits,
  tally: SkipTally,
  ignore: string | undefined,
): Promise<Found[] | string> {
  const ignored = ignore === undefined ? undefined : Buffer.from(ignore)
  const maxEntries = limits.maxEntries ?? 10 * limits.maxFiles
  const found: Found[] = []
  let entries = 0
  let total = 0
  const pending: Buffer[] = [Buffer.alloc(0)]
  while (pending.length > 0) {
    const rel = pending.pop() as Buffer
    const host = rel.length === 0 ? root : Buffer.concat([root, SLASH, rel])
    let folder: Dir
    try {
      // Buffer names: a name that is not UTF-8 must be seen as it is, not as U+FFFD.
      folder = await fs.opendir(host, { encoding: 'buffer' as BufferEncoding })
    } catch (err) {
      if (rel.length === 0 && (err as NodeJS.ErrnoException).code === 'ENOENT') return []
      tally.add(reasonOf(err), rel)
      continue
    }
    try {
      for await (const entry of folder) {
        if (++entries > maxEntries) return `outputs hold more than ${maxEntries} entries`
        const name = entry.name as unknown as Buffer
        if (rel.length === 0 && ignored !== undefined && name.equals(ignored)) continue
        const path = rel.length === 0 ? name : Buffer.concat([rel, SLASH, name])
        if (!isUtf8(name)) tally.add('with a name that is not UTF-8', path)
        else if (entry.isDirectory()) pending.push(path)
        else if (!entry.isFile()) tally.add('not a regular file or folder', path)
        else {
          const hostPath = Buffer.concat([host, SLASH, name])
          let size: number
          try {
            size = (await fs.lstat(hostPath)).size
          } catch (err) {
            tally.add(reasonOf(err), path)
            continue
          }
          found.push({ path: path.toString('utf8'), host: hostPath })
          if (found.length > limits.maxFiles) return `outputs exceed ${limits.maxFiles} files`
          total += size
          if (total > limits.maxBytes) return `outputs exceed ${limits.maxBytes} bytes`
        }
      }
    } catch (err) {
      // The folder failed midway: what was read of it stays, the rest is counted as one entry.
      tally.add(reasonOf(err), rel)
    }
  }
  return found
}

/** Why an entry could not be read, as a skip reason. */
function reasonOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'ENAMETOOLONG') return 'with a path too long to open'
  // The code only: a message may carry the path, and the reasons must stay few.
  return `unreadable (${code ?? 'unknown error'})`
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
