import { DmsError } from '../../actors/errors.js'
import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { request, type IncomingMessage } from 'node:http'
import { pipeline } from 'node:stream/promises'

export class ApiClientError extends DmsError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    readonly field?: string,
  ) {
    super(code, message)
  }
}

export class DaemonNotRunningError extends DmsError {
  constructor(readonly socketPath: string) {
    super(
      'DAEMON_NOT_RUNNING',
      `no dms daemon answers on ${socketPath}: start one with 'dms run --config <file>'`,
    )
  }
}

/** A small client for the REST API on a unix socket (the CLI's and the tests' way in). */
export class ApiClient {
  constructor(readonly socketPath: string) {}

  call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    return new Promise((resolve, reject) => {
      const req = request(
        {
          socketPath: this.socketPath,
          method,
          path,
          headers: data ? { 'content-type': 'application/json', 'content-length': data.length } : {},
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            let parsed: unknown = text
            try {
              parsed = text.length > 0 ? JSON.parse(text) : undefined
            } catch {
              /* not JSON: keep text */
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T })
          })
        },
      )
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED')
          reject(new DaemonNotRunningError(this.socketPath))
        else reject(err)
      })
      if (data) req.write(data)
      req.end()
    })
  }

  /**
   * A request with a raw body (uploads) and a raw answer (files, archives). `onData` gets the
   * answer's bytes as they arrive (streams such as `logs?follow=true`); then `body` is empty.
   */
  raw(
    method: string,
    path: string,
    opts: { body?: Uint8Array; onData?: (chunk: Buffer) => void } = {},
  ): Promise<{ status: number; contentType: string; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          socketPath: this.socketPath,
          method,
          path,
          headers:
            opts.body !== undefined
              ? { 'content-type': 'application/octet-stream', 'content-length': opts.body.length }
              : {},
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => (opts.onData !== undefined ? opts.onData(c) : chunks.push(c)))
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              contentType: String(res.headers['content-type'] ?? ''),
              body: Buffer.concat(chunks),
            }),
          )
          res.on('error', reject)
        },
      )
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED')
          reject(new DaemonNotRunningError(this.socketPath))
        else reject(err)
      })
      if (opts.body !== undefined) req.write(opts.body)
      req.end()
    })
  }

  /** Like `call`, but a non-2xx answer throws ApiClientError with the server's code and message. */
  async ok<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.call<T | { error?: { code: string; message: string; field?: string } }>(
      method,
      path,
      body,
    )
    if (res.status >= 200 && res.status < 300) return res.body as T
    const e = (res.body as { error?: { code: string; message: string; field?: string } })?.error
    if (res.status === 404 && e?.code === 'NOT_FOUND')
      throw new RouteMissingError(this.socketPath, `${method} ${path.split('?')[0]}`)
    throw new ApiClientError(
      res.status,
      e?.code ?? `HTTP_${res.status}`,
      e?.message ?? JSON.stringify(res.body),
      e?.field,
    )
  }
}

/** The daemon answered 404 NOT_FOUND for a route it does not have: it is older than this CLI. */
export class RouteMissingError extends DmsError {
  constructor(
    readonly socketPath: string,
    readonly route: string,
  ) {
    super(
      'ROUTE_MISSING',
      `the daemon on ${socketPath} has no route ${route}: it runs an older dms, restart it with this version`,
    )
  }
}

/**
 * A streamed GET answering NDJSON: yields each parsed line as it arrives. A non-2xx answer
 * throws ApiClientError (or RouteMissingError for a 404 NOT_FOUND route).
 */
export async function* ndjson<T>(socketPath: string, path: string, signal?: AbortSignal): AsyncGenerator<T> {
  const res = await okResponse(socketPath, path, signal)
  let buf = ''
  for await (const chunk of res) {
    buf += (chunk as Buffer).toString('utf8')
    let nl: number
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim()
      buf = buf.slice(nl + 1)
      if (line.length > 0) yield JSON.parse(line) as T
    }
  }
  if (buf.trim().length > 0) yield JSON.parse(buf) as T
}

/**
 * A GET whose answer is written to `file`, a new file, as it arrives and hashed on the way
 * (downloads of any size, never held in memory). A non-2xx answer throws ApiClientError (or
 * RouteMissingError); a file already at `file` (or a symlink) rejects with EEXIST.
 */
export async function downloadTo(
  socketPath: string,
  path: string,
  file: string,
): Promise<{ sha256: string; size: number }> {
  const res = await okResponse(socketPath, path)
  const hash = createHash('sha256')
  let size = 0
  await pipeline(
    res,
    async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        hash.update(chunk)
        size += chunk.length
        yield chunk
      }
    },
    // A new file only: never written through a file or symlink already there (EEXIST).
    createWriteStream(file, { flags: 'wx' }),
  )
  return { sha256: hash.digest('hex'), size }
}

/**
 * Uploads a local file as a blob (`PUT /v1/blobs`), streamed from disk with its size declared, so
 * the node refuses one over its limit before a byte is sent. Resolves with the node's answer.
 */
export async function uploadFile(
  socketPath: string,
  file: string,
): Promise<{ sha256: string; size: number }> {
  const { size } = await stat(file)
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(
      {
        socketPath,
        method: 'PUT',
        path: '/v1/blobs',
        headers: { 'content-type': 'application/octet-stream', 'content-length': size },
      },
      resolve,
    )
    // A node that refuses (413) answers and closes at once: the write may then fail with EPIPE
    // or ECONNRESET before its answer is read. The answer says why; the write error only if none.
    let writeError: Error | undefined
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') reject(new DaemonNotRunningError(socketPath))
      else if (err.code === 'EPIPE' || err.code === 'ECONNRESET') writeError = err
      else reject(err)
    })
    req.on('close', () => reject(writeError ?? new Error('the node closed the upload without an answer')))
    const body = createReadStream(file)
    body.on('error', (err) => {
      reject(err)
      req.destroy()
    })
    body.pipe(req)
  })
  const chunks: Buffer[] = []
  for await (const c of res) chunks.push(c as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  const status = res.statusCode ?? 0
  if (status < 200 || status >= 300) throw errorOf(socketPath, 'PUT /v1/blobs', status, text)
  return JSON.parse(text) as { sha256: string; size: number }
}

/** The answer to a GET, once its status is 2xx; otherwise its error is thrown. */
export async function okResponse(
  socketPath: string,
  path: string,
  signal?: AbortSignal,
): Promise<IncomingMessage> {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request({ socketPath, method: 'GET', path, signal }, resolve)
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') reject(new DaemonNotRunningError(socketPath))
      else reject(err)
    })
    req.end()
  })
  const status = res.statusCode ?? 0
  if (status < 200 || status >= 300) {
    const chunks: Buffer[] = []
    for await (const c of res) chunks.push(c as Buffer)
    throw errorOf(socketPath, `GET ${path}`, status, Buffer.concat(chunks).toString('utf8'))
  }
  return res
}

/** The error of a non-2xx answer: the server's code and message, or RouteMissingError. */
export function errorOf(socketPath: string, route: string, status: number, text: string): Error {
  let e: { code?: string; message?: string; field?: string } | undefined
  try {
    e = (JSON.parse(text) as { error?: typeof e }).error
  } catch {
    /* not JSON */
  }
  if (status === 404 && e?.code === 'NOT_FOUND') return new RouteMissingError(socketPath, route)
  return new ApiClientError(status, e?.code ?? `HTTP_${status}`, e?.message ?? text, e?.field)
}
