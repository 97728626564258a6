/**
 * Lays a job's inputs out as files for its container's read-only /inputs: each input is a blob
 * from the store, hard-linked (or copied across file systems) to its path under `dir`.
 */
import { promises as fs } from 'node:fs'
import { dirname, join } from 'node:path'
import type { BlobStore } from './store.js'
import { checkRelativePath } from '../workload/tar.js'
import type { InputFile } from '../protocol/blob-payloads.js'

export type { InputFile, InputSource } from '../protocol/blob-payloads.js'

/** Checks an input list: safe relative paths, no duplicates, no file that is also a folder. */
export function inputsProblem(inputs: InputFile[]): string | undefined {
  const paths = new Set<string>()
  for (const [i, f] of inputs.entries()) {
    try {
      checkRelativePath(f.path)
    } catch {
      return `inputs[${i}].path ${JSON.stringify(f.path)} must be relative, without empty, . or .. parts`
    }
    if (paths.has(f.path)) return `inputs[${i}].path ${f.path} is given twice`
    paths.add(f.path)
  }
  for (const p of paths) {
    for (let at = p.indexOf('/'); at >= 0; at = p.indexOf('/', at + 1)) {
      if (paths.has(p.slice(0, at))) return `inputs: ${p.slice(0, at)} is both a file and a folder`
    }
  }
  return undefined
}

/** Creates `dir` with every input in place, read-only. The blobs must be in the store. */
export async function stageInputs(store: BlobStore, inputs: InputFile[], dir: string): Promise<void> {
  const problem = inputsProblem(inputs)
  if (problem !== undefined) throw new Error(problem)
  await fs.mkdir(dir, { recursive: true, mode: 0o755 })
  for (const f of inputs) {
    const target = join(dir, f.path)
    await fs.mkdir(dirname(target), { recursive: true, mode: 0o755 })
    const source = store.path(f.sha256)
    try {
      await fs.link(source, target)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err
      await fs.copyFile(source, target)
    }
    // Readable by the container's unprivileged user; the mount is read-only as well.
    await fs.chmod(target, 0o444)
  }
}
