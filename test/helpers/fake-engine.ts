/**
 * A stand-in Docker engine (named as such: a mock) for the faults a real engine cannot be made to
 * produce on demand: an HTTP server on a unix socket in a temp dir that records every request and
 * answers each as its `answer` says, including a redirect elsewhere, a reset, or bytes that are
 * not HTTP. The engine's version and the provider's self-check (dms/executor/docker/self-check.ts)
 * are answered as a real engine answers them, so a provider sees it as available.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export type EngineAnswer =
  { status: number; json?: unknown; headers?: Record<string, string> } | { reset: true } | { garbage: string }

export interface FakeEngine {
  socketPath: string
  /** `METHOD path` of every request, in order. */
  requests: string[]
  /** Resolves once a request whose `METHOD path` passes `test` has come (now or later). */
  seen(test: (request: string) => boolean): Promise<string>
  stop(): Promise<void>
}

/** A real engine's answers to the self-check: its image is there, the program it asks for is not. */
function selfCheckAnswer(method: string, path: string): EngineAnswer | undefined {
  if (method === 'GET' && path.startsWith('/images/dms-self-check:1/json')) return { status: 200, json: {} }
  if (method === 'POST' && /^\/containers\/create\?name=dms-self-check-/.test(path)) {
    return { status: 201, json: { Id: 'self-check', Warnings: [] } }
  }
  if (method === 'POST' && path.startsWith('/containers/self-check/start')) {
    return {
      status: 400,
      json: { message: 'exec: "/dms-self-check-absent": stat: no such file or directory' },
    }
  }
  if (method === 'DELETE' && path.startsWith('/containers/self-check')) return { status: 204 }
  return undefined
}

export async function startFakeEngine(
  answer: (method: string, path: string) => EngineAnswer,
): Promise<FakeEngine> {
  const dir = await mkdtemp(join(tmpdir(), 'dms-fake-engine-'))
  const socketPath = join(dir, 'docker.sock')
  const requests: string[] = []
  const waiters = new Set<{ test: (r: string) => boolean; resolve: (r: string) => void }>()
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    // dockerode prefixes no API version unless asked; strip one if present.
    const path = (req.url ?? '').replace(/^\/v\d+\.\d+\//, '/')
    const request = `${req.method ?? ''} ${path}`
    requests.push(request)
    for (const w of [...waiters])
      if (w.test(request)) {
        waiters.delete(w)
        w.resolve(request)
      }
    if (path === '/version' || path === '/_ping') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ Version: '20.10.24-fake', ApiVersion: '1.41' }))
      return
    }
    const check = selfCheckAnswer(req.method ?? '', path)
    const a = check ?? answer(req.method ?? '', path)
    if ('reset' in a) {
      req.socket.destroy()
      return
    }
    if ('garbage' in a) {
      req.socket.end(a.garbage)
      return
    }
    res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers })
    res.end(a.json === undefined ? '' : JSON.stringify(a.json))
  })
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  return {
    socketPath,
    requests,
    seen: (test) => {
      const done = requests.find(test)
      if (done !== undefined) return Promise.resolve(done)
      return new Promise((resolve) => waiters.add({ test, resolve }))
    },
    async stop() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await rm(dir, { recursive: true, force: true })
    },
  }
}
