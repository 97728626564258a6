import { createHash } from 'node:crypto'

/**
 * The hash that names a run's outputs, the same on both sides: sha256 (hex) over, for each file in
 * path order, `path + '\0' + sha256hex + '\n'`. Paths are compared by UTF-16 code units (plain
 * `<`), never by locale, so every machine sorts them the same way.
 *
 * The provider signs it in its receipt (`outputsHash`); the requester recomputes it from the files
 * it received (after checking each file's sha256 against its content) and compares.
 */
export function hashOutputs(outputs: ReadonlyArray<{ path: string; sha256: string }>): string {
  const sorted = [...outputs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const hash = createHash('sha256')
  for (const file of sorted) hash.update(`${file.path}\0${file.sha256}\n`, 'utf8')
  return hash.digest('hex')
}

/** Longest `OutputsSkipped.detail` (characters). */
export const MAX_SKIPPED_DETAIL = 1024

/**
 * Entries under a run's /outputs that collection left out (a name that is not UTF-8, a path too
 * long to open, a symlink or FIFO, an unreadable file): how many, and why with a few names, escaped.
 */
export interface OutputsSkipped {
  count: number
  /** For a person, at most MAX_SKIPPED_DETAIL characters. */
  detail: string
}
