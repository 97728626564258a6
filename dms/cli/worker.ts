/**
 * `dms worker register DIR` and `dms worker list`: workers on the requester node (specs/functions.md).
 * `register` reads `DIR/worker.json` (a worker descriptor whose executables and files may leave out
 * `sha256` and `size`: they are read from `DIR/<path>`), posts it, uploads only the blobs the node
 * says it lacks (the needs dance), and posts it again.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { join, relative, resolve, sep } from 'node:path'
import { ApiClient, ApiClientError, RouteMissingError } from '../api/client.js'
import { putBlob } from './blob.js'
import { CliError, printData } from './output.js'
import { printTable } from './table.js'

export type Opts = { socket: string; json?: boolean }

interface Registration {
  id: string
  registered: boolean
  needs: Array<{ sha256: string; size: number }>
}

interface FileEntry {
  path: string
  sha256?: string
  size?: number
}

function problem(err: unknown): never {
  if (err instanceof ApiClientError || err instanceof RouteMissingError) throw new CliError(err.message)
  throw err
}

async function hashFile(file: string): Promise<{ sha256: string; size: number }> {
  const h = createHash('sha256')
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer)
  return { sha256: h.digest('hex'), size: (await stat(file)).size }
}

/** `DIR/<path>`, refused when it would leave DIR (the node refuses such paths anyway). */
function inDir(dir: string, path: unknown): string {
  if (typeof path !== 'string' || path.length === 0) throw new CliError(`worker.json: a file without a path`)
  const file = resolve(dir, path)
  const rel = relative(dir, file)
  if (rel.startsWith('..') || rel.startsWith(sep) || rel === '')
    throw new CliError(`worker.json: ${JSON.stringify(path)} is not a path inside ${dir}`)
  return file
}

/** The descriptor in `DIR/worker.json` with every file's sha256 and size filled in from DIR. */
async function descriptorOf(
  dir: string,
): Promise<{ body: Record<string, unknown>; files: Map<string, string> }> {
  const at = join(dir, 'worker.json')
  let body: Record<string, unknown>
  try {
    body = JSON.parse(await readFile(at, 'utf8')) as Record<string, unknown>
  } catch (err) {
    throw new CliError(`cannot read ${at}: ${(err as Error).message}`)
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new CliError(`${at}: a worker descriptor is a JSON object`)
  const files = new Map<string, string>()
  for (const key of ['executables', 'files']) {
    const list = body[key]
    if (list === undefined) continue
    if (!Array.isArray(list)) throw new CliError(`${at}: ${key} is a list`)
    body[key] = await Promise.all(
      (list as FileEntry[]).map(async (f) => {
        const file = inDir(dir, f?.path)
        const hashed = await hashFile(file).catch((err: unknown) => {
          throw new CliError(`cannot read ${file}: ${(err as Error).message}`)
        })
        if (f.sha256 !== undefined && f.sha256 !== hashed.sha256)
          throw new CliError(`${at}: ${f.path} hashes to ${hashed.sha256}, not the sha256 it names`)
        files.set(hashed.sha256, file)
        return { ...f, ...hashed }
      }),
    )
  }
  return { body, files }
}

export async function workerRegisterCommand(dir: string, o: Opts): Promise<void> {
  const { body, files } = await descriptorOf(dir)
  const api = new ApiClient(o.socket)
  const post = () => api.ok<Registration>('POST', '/v1/workers', body).catch((err: unknown) => problem(err))
  let reg = await post()
  let uploaded = 0
  if (!reg.registered) {
    for (const need of reg.needs) {
      const file = files.get(need.sha256)
      if (file === undefined)
        throw new CliError(`the node asks for blob ${need.sha256}, which no file here holds`)
      await putBlob(o.socket, file)
      uploaded++
    }
    reg = await post()
    if (!reg.registered) throw new CliError(`the node still lacks ${reg.needs.length} blobs after the upload`)
  }
  if (o.json) return printData({ ...reg, uploaded })
  printTable(['WORKER', 'UPLOADED'], [[reg.id, uploaded]])
}

interface WorkerSummary {
  id: string
  name: string
  buildSystemVersion: string
  functions: Array<{ name: string; version: string }>
  registeredAt: number
}

export async function workerListCommand(o: Opts): Promise<void> {
  const api = new ApiClient(o.socket)
  const { workers } = await api
    .ok<{ workers: WorkerSummary[] }>('GET', '/v1/workers')
    .catch((err: unknown) => problem(err))
  const { functions } = await api
    .ok<{
      functions: Array<{ function: string; version: string; buildSystemVersion: string; workers: string[] }>
    }>('GET', '/v1/functions')
    .catch((err: unknown) => problem(err))
  if (o.json) return printData({ workers, functions })
  printTable(
    ['WORKER', 'NAME', 'BUILD SYSTEM', 'FUNCTIONS', 'REGISTERED'],
    workers.map((w) => [
      w.id.slice(0, 12),
      w.name,
      w.buildSystemVersion,
      w.functions.map((f) => `${f.name}@${f.version}`).join(','),
      new Date(w.registeredAt).toISOString(),
    ]),
  )
}
