import { createHash } from 'node:crypto'
import type { ExecutionResult, ExecutionStatus, OutputFile } from './executor.js'

/**
 * The hash that names a run's outputs, independent of the executor: sha256 (hex) over, for each
 * file in path order, `path + '\0' + sha256hex + '\n'`. Paths are compared by UTF-16 code units
 * (plain `<`), never by locale, so every machine sorts them the same way.
 *
 * The requester recomputes it from the files it received (after checking each file's sha256
 * against its content) and compares it with the `outputsHash` the provider signed.
 */
export function hashOutputs(outputs: ReadonlyArray<Pick<OutputFile, 'path' | 'sha256'>>): string {
  const sorted = [...outputs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const hash = createHash('sha256')
  for (const file of sorted) hash.update(`${file.path}\0${file.sha256}\n`, 'utf8')
  return hash.digest('hex')
}

/** The result of a run whose program never ran (cancelled before start, or could not be started). */
export function notStarted(status: ExecutionStatus, exitCode: number, reason: string): ExecutionResult {
  return {
    status,
    exitCode,
    reason,
    stdout: '',
    stderr: '',
    truncated: false,
    outputs: [],
    outputsHash: hashOutputs([]),
    usage: { wallSeconds: 0, cpuSeconds: 0, peakMemoryBytes: 0 },
  }
}
