/**
 * The REST routes over fake ports: what each route makes of what its port answers (order, shape,
 * status, error codes), with no node behind them.
 */
import assert from 'node:assert/strict'
import { DmsError } from '../../../actors/errors.js'
import { detachedPorts } from '../../../dms/api/null-ports.js'
import type { ApiPorts, JobsPort, JobView } from '../../../dms/api/ports.js'
import { buildApi } from '../../../dms/api/server.js'
import type { QuoteReply } from '../../../dms/api/schemas.js'
import { silentLogger } from '../../../dms/log.js'
import type { JobRecord } from '../../../dms/orchestrator/job-record.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import type { JobLog } from '../../../dms/protocol/messages.js'

const record = (id: string, createdAt: number, extra: Partial<JobRecord> = {}): JobRecord => ({
  id,
  spec: parseJobSpec({
    name: `job ${id}`,
    image: 'alpine:3',
    command: ['true'],
    resources: { cpu: 1, memory: '64MiB' },
    maxDuration: 60,
    maxPrice: 10,
  }),
  createdAt,
  history: [],
  bids: [],
  declines: [],
  tried: [],
  updates: [],
  ...extra,
})

/** An in-memory requester: jobs by id, listeners called by `emit`. */
class FakeJobs implements JobsPort {
  readonly jobs = new Map<string, JobView>()
  readonly posted: unknown[] = []
  private readonly logs = new Set<(id: string, l: JobLog) => void>()
  private readonly changes = new Set<(j: JobView) => void>()
  live: Record<string, { stdout: string; stderr: string; truncated: boolean }> = {}

  post(body: unknown): Promise<JobView> {
    if ((body as { image?: unknown }).image === undefined)
      return Promise.reject(
        Object.assign(new DmsError('INVALID_JOB_SPEC', 'image: is required'), { field: 'image' }),
      )
    this.posted.push(body)
    const job = { state: 'bidding', record: record(`j${this.posted.length}`, 1) }
    this.jobs.set(job.record.id, job)
    return Promise.resolve(job)
  }
  quote(body: unknown): Promise<QuoteReply> {
    if ((body as { image?: unknown }).image === undefined)
      return Promise.reject(
        Object.assign(new DmsError('INVALID_JOB_SPEC', 'image: is required'), { field: 'image' }),
      )
    return Promise.resolve({
      quoteId: 'q1',
      bids: [{ provider: 'P', bidId: 'b', total: 7, rank: 1, why: 'only bid' }],
      declines: [{ provider: 'Q', reasons: ['not enough cpu'] }],
      released: 1,
    })
  }
  list = () =>
    Promise.resolve({
      jobs: [...this.jobs.values()].sort((a, b) => b.record.createdAt - a.record.createdAt),
    })
  rerun = (id: string) => Promise.reject(new DmsError('JOB_LIVE', `job ${id} is running`))
  readonly pruned: unknown[] = []
  prune = (policy: unknown) => {
    this.pruned.push(policy)
    return Promise.resolve({ pruned: 1, blobsDeleted: 0, grantsRevoked: 0 })
  }
  get = (id: string) => Promise.resolve(this.jobs.get(id))
  cancel(id: string): Promise<JobView> {
    const job = this.jobs.get(id)
    if (job === undefined) return Promise.reject(new DmsError('JOB_NOT_FOUND', `no job ${id}`))
    if (job.state === 'completed') return Promise.reject(new DmsError('JOB_ENDED', `job ${id} is completed`))
    return Promise.resolve({ ...job, state: 'cancelling' })
  }
  liveLogs = (id: string, member?: string) => this.live[member === undefined ? id : `${id}/${member}`]
  onLog(fn: (id: string, l: JobLog) => void) {
    this.logs.add(fn)
    return () => this.logs.delete(fn)
  }
  onChange(fn: (j: JobView) => void) {
    this.changes.add(fn)
    return () => this.changes.delete(fn)
  }
  emitLog(id: string, l: JobLog) {
    for (const fn of this.logs) fn(id, l)
  }
  emitChange(j: JobView) {
    for (const fn of this.changes) fn(j)
  }
  get listeners() {
    return this.logs.size + this.changes.size
  }
}

const api = (over: Partial<ApiPorts>) => buildApi({ ...detachedPorts(), ...over }, { log: silentLogger }).app

describe('REST routes over their ports', () => {
  it('jobs: posts through the port, lists newest first, shows a job with its allocation and usage', async () => {
    const jobs = new FakeJobs()
    const app = api({ jobs })
    const posted = await app.inject({ method: 'POST', url: '/v1/jobs', payload: { image: 'x' } })
    assert.equal(posted.statusCode, 201)
    assert.deepEqual(posted.json(), { id: 'j1', state: 'bidding' })
    assert.deepEqual(jobs.posted, [{ image: 'x' }], 'the body goes to the port as it came')

    const bad = await app.inject({ method: 'POST', url: '/v1/jobs', payload: {} })
    assert.equal(bad.statusCode, 400)
    assert.deepEqual(bad.json(), {
      error: { code: 'INVALID_JOB_SPEC', message: 'image: is required', field: 'image' },
    })

    jobs.jobs.set('old', { state: 'failed', record: record('old', 0) })
    jobs.jobs.set('new', {
      state: 'running',
      record: record('new', 5, {
        winner: { bidId: 'b', provider: 'P', why: '' },
        allocationId: 'a1',
        updates: [{ jobId: 'new', allocationId: 'a1', state: 'running', at: 6 }],
      }),
    })
    const list = await app.inject({ method: 'GET', url: '/v1/jobs' })
    assert.deepEqual(
      list.json<{ jobs: Array<{ id: string; provider?: string }> }>().jobs.map((j) => [j.id, j.provider]),
      [
        ['new', 'P'],
        ['j1', undefined],
        ['old', undefined],
      ],
    )
    const one = (await app.inject({ method: 'GET', url: '/v1/jobs/new' })).json<Record<string, unknown>>()
    assert.equal(one.state, 'running')
    assert.equal(one.id, 'new')
    assert.deepEqual(one.allocation, { id: 'a1', provider: 'P', state: 'running' })
    assert.equal(one.usage, null)
    // The spec in the form POST /v1/jobs takes: posted as is, it is the same job again.
    assert.deepEqual(one.postedSpec, {
      name: 'job new',
      image: 'alpine:3',
      command: ['true'],
      resources: { cpu: 1, memory: 64 * 1024 * 1024 },
      maxDuration: 60,
      maxPrice: 10,
      retries: 3,
    })
    const none = await app.inject({ method: 'GET', url: '/v1/jobs/nope' })
    assert.equal(none.statusCode, 404)
    assert.equal(none.json<{ error: { code: string } }>().error.code, 'JOB_NOT_FOUND')
  })

  it("quotes: the port's bids and declines (200); a bad spec is 400 naming the field", async () => {
    const app = api({ jobs: new FakeJobs() })
    const ok = await app.inject({ method: 'POST', url: '/v1/quotes', payload: { image: 'x' } })
    assert.equal(ok.statusCode, 200)
    assert.deepEqual(ok.json<QuoteReply>().declines, [{ provider: 'Q', reasons: ['not enough cpu'] }])
    assert.equal(ok.json<QuoteReply>().bids?.[0].total, 7)
    const bad = await app.inject({ method: 'POST', url: '/v1/quotes', payload: {} })
    assert.equal(bad.statusCode, 400)
    assert.equal(bad.json<{ error: { field: string } }>().error.field, 'image')
    const none = await api({}).inject({ method: 'POST', url: '/v1/quotes', payload: { image: 'x' } })
    assert.equal(none.statusCode, 409, 'not a requester')
  })

  it("jobs: cancel answers 202, and the port's JOB_NOT_FOUND and JOB_ENDED as 404 and 409", async () => {
    const jobs = new FakeJobs()
    jobs.jobs.set('a', { state: 'running', record: record('a', 1) })
    jobs.jobs.set('b', { state: 'completed', record: record('b', 1) })
    const app = api({ jobs })
    const ok = await app.inject({ method: 'DELETE', url: '/v1/jobs/a' })
    assert.equal(ok.statusCode, 202)
    assert.deepEqual(ok.json(), { id: 'a', state: 'cancelling' })
    const ended = await app.inject({ method: 'DELETE', url: '/v1/jobs/b' })
    assert.equal(ended.statusCode, 409)
    assert.deepEqual(ended.json(), { error: { code: 'JOB_ENDED', message: 'job b is completed' } })
    const missing = await app.inject({ method: 'DELETE', url: '/v1/jobs/c' })
    assert.equal(missing.statusCode, 404)
    assert.equal(missing.json<{ error: { code: string } }>().error.code, 'JOB_NOT_FOUND')
  })

  it('logs: the output so far, then live lines from the port until the job ends', async () => {
    const jobs = new FakeJobs()
    jobs.jobs.set('r', { state: 'running', record: record('r', 1) })
    jobs.live.r = { stdout: 'so far\n', stderr: '', truncated: false }
    const app = api({ jobs })
    assert.deepEqual((await app.inject({ method: 'GET', url: '/v1/jobs/r/logs' })).json(), {
      stdout: 'so far\n',
      stderr: '',
      truncated: false,
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    try {
      const res = await fetch(
        `http://127.0.0.1:${(app.server.address() as { port: number }).port}/v1/jobs/r/logs?follow=true`,
      )
      assert.equal(res.headers.get('content-type'), 'application/x-ndjson')
      const reader = (res.body as ReadableStream<Uint8Array>).getReader()
      let text = ''
      const until = async (line: string) => {
        while (!text.includes(line)) text += new TextDecoder().decode((await reader.read()).value)
      }
      await until('so far')
      jobs.emitLog('other', { jobId: 'other', allocationId: 'x', seq: 0, stream: 'stdout', data: 'not mine' })
      jobs.emitLog('r', { jobId: 'r', allocationId: 'a', seq: 0, stream: 'stderr', data: 'live' })
      await until('live')
      jobs.emitChange({ state: 'completed', record: record('r', 1) })
      for (let r = await reader.read(); !r.done; r = await reader.read())
        text += new TextDecoder().decode(r.value)
      assert.deepEqual(
        text
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as unknown),
        [
          { stream: 'stdout', data: 'so far\n' },
          { stream: 'stderr', data: 'live' },
          { end: true, state: 'completed' },
        ],
      )
      assert.equal(jobs.listeners, 0, 'the route unsubscribed when the job ended')
    } finally {
      await app.close()
    }
  })

  it("logs of a pod: member by member, one member's with ?member= (live or from the result), follow filtered by member", async () => {
    const jobs = new FakeJobs()
    const app = api({ jobs })
    const members = [{ name: 'a' }, { name: 'b' }]
    jobs.jobs.set('p', { state: 'running', record: record('p', 1, { spec: { members } } as never) })
    jobs.jobs.set('one', { state: 'running', record: record('one', 1) })
    jobs.live['p/a'] = { stdout: 'a so far', stderr: '', truncated: false }
    const get = (url: string) => app.inject({ method: 'GET', url })
    assert.deepEqual((await get('/v1/jobs/p/logs?member=a')).json(), {
      stdout: 'a so far',
      stderr: '',
      truncated: false,
    })
    assert.deepEqual((await get('/v1/jobs/p/logs')).json(), {
      stdout: '',
      stderr: '',
      truncated: false,
      members: [
        { name: 'a', stdout: 'a so far', stderr: '', truncated: false },
        { name: 'b', stdout: '', stderr: '', truncated: false },
      ],
    })
    const unknown = await get('/v1/jobs/p/logs?member=c')
    assert.deepEqual(
      [unknown.statusCode, unknown.json<{ error: { code: string } }>().error.code],
      [404, 'MEMBER_NOT_FOUND'],
    )
    const notPod = await get('/v1/jobs/one/logs?member=a')
    assert.equal(notPod.statusCode, 400)
    assert.match(notPod.json<{ error: { message: string } }>().error.message, /is not a pod/)
    assert.equal((await get('/v1/jobs/p/logs?member=..')).statusCode, 400, 'a name outside the grammar')
    // Once the result came: each member's from it.
    const result = {
      stdout: '',
      stderr: '',
      truncated: false,
      members: [{ name: 'b', stdout: 'b done', stderr: 'e', truncated: true }],
    }
    jobs.jobs.set('p', { state: 'completed', record: record('p', 1, { spec: { members }, result } as never) })
    assert.deepEqual((await get('/v1/jobs/p/logs?member=b')).json(), {
      stdout: 'b done',
      stderr: 'e',
      truncated: true,
    })

    jobs.jobs.set('p', { state: 'running', record: record('p', 1, { spec: { members } } as never) })
    await app.listen({ port: 0, host: '127.0.0.1' })
    try {
      const res = await fetch(
        `http://127.0.0.1:${(app.server.address() as { port: number }).port}/v1/jobs/p/logs?follow=true&member=a`,
      )
      const reader = (res.body as ReadableStream<Uint8Array>).getReader()
      let text = ''
      const until = async (line: string) => {
        while (!text.includes(line)) text += new TextDecoder().decode((await reader.read()).value)
      }
      await until('so far')
      jobs.emitLog('p', {
        jobId: 'p',
        allocationId: 'x',
        seq: 0,
        stream: 'stdout',
        data: 'b live',
        member: 'b',
      })
      jobs.emitLog('p', {
        jobId: 'p',
        allocationId: 'x',
        seq: 1,
        stream: 'stdout',
        data: 'a live',
        member: 'a',
      })
      await until('a live')
      jobs.emitChange({ state: 'completed', record: record('p', 1) })
      for (let r = await reader.read(); !r.done; r = await reader.read())
        text += new TextDecoder().decode(r.value)
      assert.deepEqual(
        text
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as unknown),
        [
          { stream: 'stdout', data: 'a so far', member: 'a' },
          { stream: 'stdout', data: 'a live', member: 'a' },
          { end: true, state: 'completed' },
        ],
      )
    } finally {
      await app.close()
    }
  })

  it('peers sorted by id, allocations newest first, info and metrics as their ports say', async () => {
    const app = api({
      peers: {
        list: () =>
          Promise.resolve([
            { peerId: 'b', addrs: ['/ip4/1'] },
            { peerId: 'a', addrs: ['/ip4/2'] },
          ]),
      },
      allocations: {
        list: () =>
          Promise.resolve([
            { allocationId: 'old', history: [{ state: 'contracted', at: 1 }] },
            { allocationId: 'new', history: [{ state: 'contracted', at: 9 }] },
          ]),
        earnings: () =>
          Promise.resolve({
            paid: 5,
            claimed: 7,
            refunded: 3,
            outstanding: 60,
            contracts: { settled: 1, claimed: 1, open: 1 },
            requesters: { r: { paid: 1, unpaid: 1, claimed: 1 } },
          }),
      },
      info: { info: () => ({ peerId: 'me', roles: { requester: false, provider: true } }) },
      metrics: {
        contentType: 'text/plain; version=0.0.4; charset=utf-8',
        render: () => Promise.resolve('m 1\n'),
      },
    })
    const peers = (await app.inject({ method: 'GET', url: '/v1/peers' })).json<{
      peers: Array<{ peerId: string }>
    }>()
    assert.deepEqual(
      peers.peers.map((p) => p.peerId),
      ['a', 'b'],
    )
    const allocs = (await app.inject({ method: 'GET', url: '/v1/allocations' })).json<{
      allocations: Array<{ allocationId: string }>
    }>()
    assert.deepEqual(
      allocs.allocations.map((a) => a.allocationId),
      ['new', 'old'],
    )
    const earnings = (await app.inject({ method: 'GET', url: '/v1/earnings' })).json<{ claimed: number }>()
    assert.equal(earnings.claimed, 7)
    assert.deepEqual((await app.inject({ method: 'GET', url: '/v1/info' })).json(), {
      peerId: 'me',
      roles: { requester: false, provider: true },
    })
    const metrics = await app.inject({ method: 'GET', url: '/metrics' })
    assert.equal(metrics.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
    assert.equal(metrics.body, 'm 1\n')
  })

  it('outputs: the archive and a file come from the blobs port; missing ones are 404', async () => {
    const jobs = new FakeJobs()
    const result = { archive: { sha256: 'ab'.repeat(32), size: 3 }, outputs: [] }
    jobs.jobs.set('d', { state: 'completed', record: record('d', 1, { result } as never) })
    const app = api({
      jobs,
      blobs: {
        maxBlobBytes: 10,
        put: () => Promise.reject(new Error('not used')),
        read: () => Promise.resolve(undefined),
        outputFile: () => Promise.resolve(undefined),
      },
    })
    const tar = await app.inject({ method: 'GET', url: '/v1/jobs/d/outputs.tar' })
    assert.equal(tar.statusCode, 404)
    assert.equal(tar.json<{ error: { code: string } }>().error.code, 'OUTPUTS_NOT_AVAILABLE')
    const file = await app.inject({ method: 'GET', url: '/v1/jobs/d/outputs/a.txt' })
    assert.equal(file.statusCode, 404)
    assert.equal(file.json<{ error: { code: string } }>().error.code, 'OUTPUT_NOT_FOUND')
    assert.deepEqual((await app.inject({ method: 'GET', url: '/v1/jobs/d/outputs' })).json(), {
      state: 'completed',
      archive: result.archive,
      files: [],
      verified: null,
    })
  })
})
