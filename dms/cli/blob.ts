/**
 * `dms blob put|get`: files in the requester node's blob store (specs/data-plane.md). A blob put
 * there can be named as a job input by its sha256; `job run --input` does both steps at once.
 */
import { existsSync } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'
import { basename } from 'node:path'
import { ApiClientError, downloadTo, okResponse, RouteMissingError, uploadFile } from '../api/client.js'
import { CliError, printData } from './output.js'
import { printTable } from './table.js'

const SHA256 = /^[0-9a-f]{64}$/

function problem(err: unknown, what: string): never {
  if (err instanceof ApiClientError || err instanceof RouteMissingError)
    throw new CliError(`${what}: ${err.message}`)
  if (['ENOENT', 'EISDIR', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? ''))
    throw new CliError(`${what}: ${(err as Error).message}`)
  throw err
}

/** Uploads `file`; resolves with its blob id and size (refusals name the file). */
export async function putBlob(socket: string, file: string): Promise<{ sha256: string; size: number }> {
  return uploadFile(socket, file).catch((err: unknown) => problem(err, `cannot upload ${file}`))
}

export async function blobPutCommand(files: string[], o: { socket: string; json?: boolean }): Promise<void> {
  const put: Array<{ file: string; sha256: string; size: number }> = []
  for (const file of files) put.push({ file, ...(await putBlob(o.socket, file)) })
  if (o.json) return printData(files.length === 1 ? put[0] : { blobs: put })
  printTable(
    ['SHA256', 'SIZE', 'FILE'],
    put.map((b) => [b.sha256, b.size, basename(b.file)]),
  )
}

export async function blobGetCommand(
  sha256: string,
  o: { socket: string; json?: boolean; out?: string; force?: boolean },
): Promise<void> {
  if (!SHA256.test(sha256))
    throw new CliError(`blob id: write the sha256 as 64 lowercase hex digits, not ${JSON.stringify(sha256)}`)
  const route = `/v1/blobs/${sha256}`
  if (o.out === undefined) {
    if (process.stdout.isTTY)
      throw new CliError('refusing to write a blob to the terminal: give --out FILE, or redirect stdout')
    const res = await okResponse(o.socket, route).catch((err: unknown) => problem(err, 'blob get'))
    await pipeline(res, process.stdout, { end: false })
    return
  }
  if (existsSync(o.out) && o.force !== true)
    throw new CliError(`${o.out} already exists: give --force to overwrite, or another --out`)
  const part = `${o.out}.part`
  // One left by a crash goes (a symlink only loses its link); the download then makes a new file.
  await rm(part, { force: true })
  try {
    const got = await downloadTo(o.socket, route, part).catch((err: unknown) => problem(err, 'blob get'))
    if (got.sha256 !== sha256) throw new CliError(`blob get: the bytes hash to ${got.sha256}, not ${sha256}`)
    await rename(part, o.out)
    if (o.json) return printData({ sha256, size: got.size, file: o.out })
    printTable(['SHA256', 'SIZE', 'FILE'], [[sha256, got.size, o.out]])
  } finally {
    await rm(part, { force: true })
  }
}
