/**
 * A Docker-API engine that answers as podman's does where it differs from Docker's (seen with
 * Debian's podman 4.3, issue 35): a real Docker engine behind a unix-socket proxy that refuses the
 * `local` log driver at create and answers 404 to the container update endpoint. Everything else
 * reaches Docker unchanged, but an attach's stream does not come through (a job cannot run here).
 * For the engine-profile tests on a machine without podman; the podman run itself is separate.
 */
import { request, createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const DOCKER = process.env.DOCKER_SOCK ?? '/var/run/docker.sock'
const MAX_BODY = 1024 * 1024

export interface PodmanLikeEngine {
  socketPath: string
  /** Paths of the update calls refused (404). */
  refusedUpdates: string[]
  close(): Promise<void>
}

function answer(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ cause: message, message, response: status }))
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length
    if (size > MAX_BODY) throw new Error('request body too large for the test proxy')
    chunks.push(c)
  }
  return Buffer.concat(chunks)
}

export async function podmanLikeEngine(): Promise<PodmanLikeEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'dms-podman-like-'))
  const socketPath = join(dir, 'engine.sock')
  const refusedUpdates: string[] = []
  const server = createServer((req, res) => {
    void (async () => {
      const path = req.url ?? '/'
      const isCreate = req.method === 'POST' && /^(\/v[\d.]+)?\/containers\/create/.test(path)
      // Only a create's body is read here; every other request streams through.
      const sent = isCreate ? await body(req) : undefined
      if (sent !== undefined) {
        const create = JSON.parse(sent.toString('utf8')) as { HostConfig?: { LogConfig?: { Type?: string } } }
        const driver = create.HostConfig?.LogConfig?.Type
        if (driver === 'local') return answer(res, 500, `invalid log driver: ${driver}`)
      }
      if (req.method === 'POST' && /\/containers\/[^/]+\/update/.test(path)) {
        refusedUpdates.push(path)
        return answer(res, 404, 'page not found')
      }
      const headers =
        sent !== undefined ? { ...req.headers, 'content-length': String(sent.length) } : req.headers
      const up = request({ socketPath: DOCKER, method: req.method, path, headers }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers)
        upRes.pipe(res)
      })
      up.on('error', (err) => {
        if (!res.headersSent) answer(res, 502, err.message)
        else res.destroy(err)
      })
      if (sent !== undefined) up.end(sent)
      else req.pipe(up)
    })().catch((err: unknown) => answer(res, 400, String(err)))
  })
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  return {
    socketPath,
    refusedUpdates,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
