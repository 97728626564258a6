/**
 * `dms job status -w` and `dms job list -w` (issue 35), run as a separate process (the built CLI)
 * against a stand-in daemon serving the routes' contract on a unix socket, its event stream
 * (`GET /v1/events`) driven by the test. No time is waited on: each step waits for what the CLI
 * printed or for the reads it made, and the reads are counted (a watch reads once per event that
 * concerns it, never on a timer).
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import type { ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { cli } from '../../helpers/cli-process.js'

const J1 = '11111111-0000-4000-8000-000000000001'
const J2 = '22222222-0000-4000-8000-000000000002'

describe('dms job status -w and job list -w (issue 35)', function () {
  this.timeout(60_000)
  let dir: string
  let app: FastifyInstance
  let sock: string
  const jobs = new Map<string, { state: string; createdAt: number }>()
  const streams = new Set<ServerResponse>()
  let opens = 0
  let onOpen: () => void = () => {}
  let reads = 0
  let onRead: () => void = () => {}
  const job = (id: string) => {
    const j = jobs.get(id)!
    return {
      id,
      state: j.state,
      spec: {},
      history: [{ state: j.state, at: j.createdAt }],
      bids: [],
      declines: [],
    }
  }
  const send = (text: string) => streams.forEach((s) => !s.writableEnded && s.write(text))
  const event = (id: string) =>
    send(`event: job\ndata: ${JSON.stringify({ id, state: jobs.get(id)?.state })}\n\n`)
  /** Resolves once `n` streams were opened in this test. */
  const opened = (n = 1) =>
    new Promise<void>((resolve) => {
      onOpen = () => opens >= n && resolve()
      onOpen()
    })
  const readsReach = (n: number) =>
    new Promise<void>((resolve) => {
      onRead = () => reads >= n && resolve()
      onRead()
    })

  before(async function () {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    dir = await mkdtemp(join(tmpdir(), 'dms-cli-watch-'))
    sock = join(dir, 'dms.sock')
    app = Fastify()
    app.get('/v1/events', (req, reply) => {
      assert.equal((req.query as { only?: string }).only, 'job', 'a job watch asks for job events only')
      reply.hijack()
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream' })
      reply.raw.write(': dms events\n\n')
      streams.add(reply.raw)
      req.raw.once('close', () => streams.delete(reply.raw))
      opens++
      onOpen()
    })
    app.get('/v1/jobs/:id', (req) => {
      reads++
      onRead()
      return job((req.params as { id: string }).id)
    })
    app.get('/v1/jobs', () => {
      reads++
      onRead()
      const rows = [...jobs].map(([id, j]) => ({ id, state: j.state, createdAt: j.createdAt }))
      return { jobs: rows.sort((a, b) => b.createdAt - a.createdAt) }
    })
    await app.listen({ path: sock })
  })
  beforeEach(() => {
    jobs.clear()
    reads = 0
    opens = 0
  })
  after(async function () {
    for (const s of streams) s.end()
    await app?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('job status -w prints the job, again only when it changed, and ends with it; one read per event for it', async () => {
    jobs.set(J1, { state: 'running', createdAt: 1 })
    jobs.set(J2, { state: 'running', createdAt: 2 })
    const w = cli('job', 'status', '-w', '--socket', sock, J1)
    await w.printed(`${J1}  running`)
    await opened()
    assert.equal(reads, 1)
    event(J2) // another job's change: not read
    event(J1) // a stored change that changes nothing shown: read, not printed again
    await readsReach(2)
    jobs.set(J1, { state: 'completed', createdAt: 1 })
    event(J1)
    assert.equal(await w.exited, 0, w.err())
    assert.equal(reads, 3, 'the first read, then one per event of this job')
    assert.equal(w.out().split(`${J1}  `).length - 1, 2, w.out())
    assert.match(w.out(), /\n\n11111111-0000-4000-8000-000000000001 {2}completed\n/)
  })

  it('job list -w prints the page, then each job that is new or changed, until Ctrl-C (exit 130)', async () => {
    jobs.set(J1, { state: 'running', createdAt: 1 })
    const w = cli('job', 'list', '-w', '--socket', sock)
    await w.printed(J1)
    await opened()
    jobs.set(J2, { state: 'queued', createdAt: 2 })
    event(J2)
    await w.printed(J2)
    jobs.set(J1, { state: 'completed', createdAt: 1 })
    event(J1)
    await w.printed(J1, 2)
    const lines = w.out().trimEnd().split('\n')
    assert.match(lines[0], /^ID +STATE +CREATED +QUEUE +NAME$/)
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(/ +/).slice(0, 2)),
      [
        [J1, 'running'],
        [J2, 'queued'],
        [J1, 'completed'],
      ],
      'a row per change, the unchanged J2 not printed again',
    )
    w.child.kill('SIGINT')
    assert.equal(await w.exited, 130)
  })

  it('a node that ends its stream, or sends a frame over 64 KiB, ends the watch with exit 1, saying why', async () => {
    jobs.set(J1, { state: 'running', createdAt: 1 })
    const closed = cli('job', 'list', '-w', '--socket', sock)
    await closed.printed(J1)
    await opened()
    streams.forEach((s) => s.end())
    assert.equal(await closed.exited, 1)
    assert.match(closed.err(), /the node closed its event stream/)

    const flood = cli('job', 'status', '-w', '--socket', sock, J1)
    await flood.printed(J1)
    await opened(2)
    send(`data: ${'x'.repeat(70 * 1024)}`)
    assert.equal(await flood.exited, 1)
    assert.match(flood.err(), /frame over 65536 bytes/)
  })
})
