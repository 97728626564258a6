/**
 * The CLI of queued, scheduled and quoted jobs (`dms job run --queue-timeout --start-at --start-by`,
 * `job status` of a queued or scheduled job, `job quote`), run as a separate process (the built
 * CLI) against a stand-in daemon serving the routes' contract on a unix socket.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Fastify, { type FastifyInstance } from 'fastify'

const exec = promisify(execFile)

async function dms(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/dms.js', ...args], { timeout: 30_000 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number; stdout: string; stderr: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr }
  }
}

const NIGHTLY = '3f2a1111-0000-4000-8000-000000000001'
const DEADLINE = Date.parse('2026-11-22T18:10:00Z')
const START = Date.parse('2026-11-22T19:00:00Z')

describe('dms job run/status/quote for queued, scheduled and quoted jobs', function () {
  this.timeout(60_000)
  let dir: string
  let app: FastifyInstance
  let sock: string
  const posted: unknown[] = []
  const quoted: unknown[] = []
  const listed: unknown[] = []

  before(async function () {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    dir = await mkdtemp(join(tmpdir(), 'dms-cli-q-'))
    sock = join(dir, 'dms.sock')
    app = Fastify()
    app.get('/v1/queues', () => ({
      queues: [
        { id: NIGHTLY, tag: 'nightly' },
        { id: '3f2b2222-0000-4000-8000-000000000002', tag: 'batch' },
        { id: '9c003333-0000-4000-8000-000000000003', tag: 'batch' },
      ],
    }))
    app.get('/v1/jobs', (req) => {
      listed.push(req.query)
      return { jobs: [] }
    })
    app.post('/v1/jobs', (req, reply) => {
      posted.push(req.body)
      return reply.status(201).send({ id: 'j1', state: 'bidding' })
    })
    app.post('/v1/quotes', (req) => {
      quoted.push(req.body)
      return {
        quoteId: 'q',
        bids: [
          {
            provider: '12D3KooWCheap',
            total: 500,
            price: '1000/hour',
            pricePerHour: 1000,
            earliestStart: START,
            rank: 1,
          },
          {
            provider: '12D3KooWDear',
            total: 900,
            price: '1800/hour',
            pricePerHour: 1800,
            earliestStart: START,
            rank: 2,
          },
        ],
        declines: [{ provider: '12D3KooWSmall', reasons: ['not enough cpu: need 1 core, free 0.5 core'] }],
        released: 2,
      }
    })
    app.get('/v1/jobs/:id', (req) => {
      const { id } = req.params as { id: string }
      const base = { id, spec: { startAt: START }, bids: [], declines: [] }
      return id === 'queued'
        ? {
            ...base,
            state: 'queued',
            history: [{ state: 'queued', at: 1 }],
            queue: {
              deadline: DEADLINE,
              rounds: 3,
              declines: [{ provider: '12D3KooWBusyProv', reasons: ['not enough cpu'] }],
            },
          }
        : { ...base, state: 'scheduled', history: [{ state: 'scheduled', at: 1 }] }
    })
    await app.listen({ path: sock })
  })
  after(async function () {
    await app?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('job run --queue-timeout 10m --start-at --start-by --provider posts queueTimeout in seconds, startAt, startBy and providers.direct', async function () {
    const r = await dms(
      'job',
      'run',
      '--socket',
      sock,
      '--image',
      'i',
      '--queue-timeout',
      '10m',
      '--start-at',
      '2026-11-22T19:00:00Z',
      '--start-by',
      '30m',
      '--provider',
      '12D3KooWOne',
      '--provider',
      '12D3KooWTwo',
      '--',
      'sh',
    )
    assert.equal(r.code, 0, r.stderr)
    const body = posted.at(-1) as { queueTimeout: number; startAt: string }
    assert.equal(body.queueTimeout, 600)
    assert.equal(body.startAt, '2026-11-22T19:00:00Z')
    assert.equal((body as { startBy?: string }).startBy, '30m', 'passed as written: the daemon checks it')
    assert.deepEqual((body as { providers?: unknown }).providers, { direct: ['12D3KooWOne', '12D3KooWTwo'] })
    for (const bad of ['10 minutes', '-1', '1.5h', '0x10']) {
      const refused = await dms(
        'job',
        'run',
        '--socket',
        sock,
        '--image',
        'i',
        '--queue-timeout',
        bad,
        '--',
        'sh',
      )
      assert.equal(refused.code, 1)
      assert.match(refused.stderr, /--queue-timeout: invalid duration/)
    }
    assert.equal(posted.length, 1, 'nothing posted for a bad duration')
  })

  it('job run --queue takes a queue by tag or id prefix and posts its id, with -f too; job list --queue as well', async function () {
    const before = posted.length
    const byTag = await dms('job', 'run', '--socket', sock, '--queue', 'nightly', '--image', 'i', '--', 'sh')
    assert.equal(byTag.code, 0, byTag.stderr)
    assert.equal((posted.at(-1) as { queue?: string }).queue, NIGHTLY)
    const file = join(dir, 'spec.json')
    await writeFile(
      file,
      JSON.stringify({ image: 'i', command: ['sh'], resources: { cpu: 1, memory: '64MiB' } }),
    )
    const withFile = await dms('job', 'run', '--socket', sock, '-f', file, '--queue', '3f2a')
    assert.equal(withFile.code, 0, withFile.stderr)
    assert.equal((posted.at(-1) as { queue?: string }).queue, NIGHTLY)
    const ambiguous = await dms(
      'job',
      'run',
      '--socket',
      sock,
      '--queue',
      'batch',
      '--image',
      'i',
      '--',
      'sh',
    )
    assert.equal(ambiguous.code, 1)
    assert.match(ambiguous.stderr, /queue "batch" is ambiguous: 3f2b2222-.*, 9c003333-/)
    const unknown = await dms('job', 'run', '--socket', sock, '--queue', 'nope', '--image', 'i', '--', 'sh')
    assert.equal(unknown.code, 1)
    assert.match(
      unknown.stderr,
      /--queue "nope": no queue has that id, tag or id prefix \(dms queue ls lists them\)/,
    )
    assert.equal(posted.length, before + 2, 'nothing posted for an ambiguous or unknown queue')
    const list = await dms('job', 'list', '--socket', sock, '--queue', 'nightly')
    assert.equal(list.code, 0, list.stderr)
    assert.equal((listed.at(-1) as { queue?: string }).queue, NIGHTLY)
  })

  it('job status says what a queued or scheduled job waits for, and until when', async function () {
    const q = await dms('job', 'status', '--socket', sock, 'queued')
    assert.equal(q.code, 0, q.stderr)
    assert.match(
      q.stdout,
      /waiting: for a provider with room until 2026-11-22T18:10:00.000Z \(3 bid rounds so far/,
    )
    assert.match(q.stdout, /declined while queued: BusyProv: not enough cpu/)
    const s = await dms('job', 'status', '--socket', sock, 'later')
    assert.match(s.stdout, /waiting: starts bidding at 2026-11-22T19:00:00.000Z/)
  })

  it('job quote prints the ranked bids and the declines', async function () {
    const r = await dms('job', 'quote', '--socket', sock, '--image', 'i', '--cpu', '1', '--', 'sh')
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /^RANK +PROVIDER +TOTAL +PRICE +START$/m)
    assert.match(r.stdout, /^1 +12D3KooWCheap +500 +1000\/hour +\d{4}-/m)
    assert.match(r.stdout, /^2 +12D3KooWDear +900 /m)
    assert.match(r.stdout, /declined: 12D3KooWSmall: not enough cpu/)
    assert.deepEqual((quoted[0] as { command: string[] }).command, ['sh'])
  })
})
