/**
 * `GET /v1/events` as the CLI's `--watch` reads it (issue 35): on the unix socket, `workflow`
 * events from the workflows port's feed, and `?only=` keeping the kinds asked for, unsubscribed
 * from the others (a watcher of jobs gets no job's log bytes). A bad `only` is 400.
 */
import assert from 'node:assert/strict'
import { get, type IncomingMessage } from 'node:http'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { detachedPorts } from '../../../dms/api/null-ports.js'
import type { JobView, WorkflowView } from '../../../dms/api/ports.js'
import { ApiServer } from '../../../dms/api/server.js'
import { silentLogger } from '../../../dms/log.js'
import type { JobLog } from '../../../dms/protocol/messages.js'
import { closed } from '../../helpers/event-stream.js'

describe('event stream: workflow events and ?only= (issue 35)', () => {
  let dir: string
  let api: ApiServer
  let sock: string
  const jobs = new Set<(j: JobView) => void>()
  const logs = new Set<(id: string, l: JobLog) => void>()
  const workflows = new Set<(w: WorkflowView) => void>()

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-events-'))
    sock = join(dir, 'dms.sock')
    const none = detachedPorts()
    api = new ApiServer(
      {
        ports: {
          ...none,
          jobs: {
            ...none.jobs,
            onChange: (fn) => (jobs.add(fn), () => void jobs.delete(fn)),
            onLog: (fn) => (logs.add(fn), () => void logs.delete(fn)),
          },
          workflows: {
            ...none.workflows,
            onChange: (fn) => (workflows.add(fn), () => void workflows.delete(fn)),
          },
        },
        log: silentLogger,
      },
      { socketPath: sock },
    )
    await api.start()
  })
  afterEach(async () => {
    await api.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const open = (path: string) =>
    new Promise<IncomingMessage>((resolve, reject) =>
      get({ socketPath: sock, path }, resolve).on('error', reject),
    )

  /** Everything `stream` sent so far, kept; `until(text)` resolves once it holds `text`. */
  const reader = (stream: IncomingMessage) => {
    stream.setEncoding('utf8')
    let got = ''
    const waiting = new Set<() => void>()
    stream.on('data', (c: string) => {
      got += c
      for (const w of waiting) w()
    })
    return {
      text: () => got,
      until: (text: string) =>
        new Promise<void>((resolve) => {
          const check = () => got.includes(text) && (waiting.delete(check), resolve())
          waiting.add(check)
          check()
        }),
    }
  }

  it('sends workflow changes, and with ?only=job,workflow subscribes to nothing else', async () => {
    const all = await open('/v1/events')
    const a = reader(all)
    await a.until(': dms events')
    assert.deepEqual([jobs.size, logs.size, workflows.size], [1, 1, 1])
    const some = await open('/v1/events?only=job,workflow')
    assert.equal(some.statusCode, 200)
    const b = reader(some)
    await b.until(': dms events')
    assert.deepEqual([jobs.size, logs.size, workflows.size], [2, 1, 2], 'no log feed for ?only=job,workflow')
    for (const fn of workflows) fn({ state: 'completed', record: { id: 'w1' } } as WorkflowView)
    for (const fn of logs) fn('j1', { jobId: 'j1', allocationId: 'a', stream: 'stdout', seq: 0, data: 'x' })
    for (const fn of jobs) fn({ state: 'running', record: { id: 'j1' } } as JobView)
    const wf = 'event: workflow\ndata: {"id":"w1","state":"completed"}\n\n'
    const job = 'event: job\ndata: {"id":"j1","state":"running"}\n\n'
    await Promise.all([a.until(wf), a.until(job), a.until('event: log\n'), b.until(wf), b.until(job)])
    assert.doesNotMatch(b.text(), /event: log/)
    await Promise.all([closed(all), closed(some)])
    while (jobs.size + logs.size + workflows.size > 0) await new Promise((r) => setImmediate(r))
  })

  it('refuses an unknown kind or an overlong ?only= with 400 INVALID_REQUEST', async () => {
    for (const only of ['jobs', 'job,', 'job;log', `${'job,'.repeat(20)}job`]) {
      const r = await open(`/v1/events?only=${encodeURIComponent(only)}`)
      const body: string[] = []
      for await (const c of r) body.push(String(c))
      assert.equal(r.statusCode, 400, only)
      assert.match(body.join(''), /INVALID_REQUEST/)
    }
    assert.equal(jobs.size, 0)
  })
})
