/**
 * The job CLI (`dms job logs|outputs|cancel|run --follow`) against a stand-in daemon that serves
 * exactly the route contract of the data plane (issue 6) and cancel (issue 5): the built CLI is
 * run as a separate process, the stand-in is a Fastify server on a unix socket. A second stand-in
 * without those routes plays an older daemon.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Fastify, { type FastifyInstance } from 'fastify'

const exec = promisify(execFile)
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex')

async function dms(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/dms.js', ...args], { timeout: 30_000 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number; stdout: string; stderr: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr }
  }
}

const notFound = (app: FastifyInstance) =>
  app.setNotFoundHandler((req, reply) => {
    void reply
      .status(404)
      .send({ error: { code: 'NOT_FOUND', message: `no route ${req.method} ${req.url}` } })
  })

describe('dms job commands against the data-plane and cancel route contract', function () {
  this.timeout(60_000)
  let dir: string
  let app: FastifyInstance
  let older: FastifyInstance
  let sock: string
  let oldSock: string
  /** Resolves the follow stream's second half: called when the client has printed the first. */
  let releaseFollow: () => void = () => undefined
  const files: Record<string, Buffer> = {
    'answer.txt': Buffer.from('42'),
    'sub/b.bin': Buffer.from([0, 1, 2]),
  }
  let polls = 0
  const posted: unknown[] = []

  before(async function () {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    dir = await mkdtemp(join(tmpdir(), 'dms-cli-'))
    sock = join(dir, 'new.sock')
    oldSock = join(dir, 'old.sock')
    app = Fastify()
    notFound(app)
    app.get('/v1/jobs/:id/logs', async (req, reply) => {
      const { id } = req.params as { id: string }
      if (id === 'missing')
        return reply.status(404).send({ error: { code: 'JOB_NOT_FOUND', message: 'no job missing' } })
      if ((req.query as { follow?: string }).follow !== 'true')
        return { stdout: 'out line\n', stderr: 'err line\n', truncated: true }
      reply.hijack()
      const res = reply.raw
      res.writeHead(200, { 'content-type': 'application/x-ndjson' })
      if (id === 'pod') {
        // Two members' pieces, interleaved and cut mid-line, as a pod's live logs come.
        const only = (req.query as { member?: string }).member
        const pieces = [
          { stream: 'stdout', data: 'one\ntw', member: 'a' },
          { stream: 'stdout', data: 'hi\n', member: 'b' },
          { stream: 'stderr', data: 'warn', member: 'b' },
          { stream: 'stdout', data: 'o\n', member: 'a' },
        ].filter((p) => only === undefined || p.member === only)
        for (const p of pieces) res.write(`${JSON.stringify(p)}\n`)
        res.end(`${JSON.stringify({ end: true, state: 'completed' })}\n`)
        return reply
      }
      res.write(`${JSON.stringify({ stream: 'stdout', data: 'first\n' })}\n`)
      await new Promise<void>((r) => (releaseFollow = r))
      res.write(`${JSON.stringify({ stream: 'stderr', data: 'oops\n' })}\n`)
      res.write(`${JSON.stringify({ stream: 'stdout', data: 'second\n' })}\n`)
      res.end(`${JSON.stringify({ end: true, state: 'completed' })}\n`)
      return reply
    })
    app.get('/v1/jobs/:id/outputs', (req) =>
      (req.params as { id: string }).id === 'evil'
        ? { archive: null, files: [{ path: '../escape.txt', sha256: sha('x'), size: 1 }] }
        : (req.params as { id: string }).id === 'lying'
          ? { archive: null, files: [{ path: 'answer.txt', sha256: sha('43'), size: 2 }] }
          : {
              archive: { sha256: sha('TAR'), size: 3 },
              files: Object.entries(files).map(([path, b]) => ({ path, sha256: sha(b), size: b.length })),
            },
    )
    app.get('/v1/jobs/:id/outputs.tar', (_req, reply) =>
      reply.type('application/x-tar').send(Buffer.from('TAR')),
    )
    app.get('/v1/jobs/:id/outputs/*', (req, reply) => {
      const path = (req.params as { '*': string })['*']
      const b = files[path]
      if (b === undefined)
        return reply.status(404).send({ error: { code: 'OUTPUT_NOT_FOUND', message: path } })
      return reply.type('application/octet-stream').send(b)
    })
    app.delete('/v1/jobs/:id', (req, reply) => {
      const { id } = req.params as { id: string }
      if (id === 'done')
        return reply.status(409).send({ error: { code: 'JOB_ENDED', message: 'job done already completed' } })
      return reply.status(202).send({ id, state: 'cancelled' })
    })
    app.post('/v1/jobs', (req, reply) => {
      posted.push(req.body)
      // A job named "pod" plays a pod job: its live logs come member by member.
      const id = (req.body as { name?: string }).name === 'pod' ? 'pod' : 'j1'
      return reply.status(201).send({ id, state: 'bidding' })
    })
    // A job whose name (stored before names were checked) and error carry terminal escapes.
    app.get('/v1/jobs', () => ({
      jobs: [{ id: 'j9', name: 'evil\u001b[2J\u001b]0;owned\u0007name', state: 'failed', createdAt: 0 }],
    }))
    app.get('/v1/jobs/:id', () => {
      // Each poll advances the job one state: bidding, running, completed.
      const states = ['bidding', 'running', 'completed'].slice(0, Math.min(3, ++polls))
      const state = states[states.length - 1]
      return {
        id: 'j1',
        state,
        spec: { name: 'x' },
        history: states.map((s, i) => ({ state: s, at: 1000 + i })),
        bids: [],
        declines: [],
        result: state === 'completed' ? { stdout: 'RESULT STDOUT\n' } : undefined,
      }
    })
    await app.listen({ path: sock })
    older = Fastify()
    notFound(older)
    older.get('/v1/jobs/:id', () => ({
      id: 'x',
      state: 'running',
      history: [],
      bids: [],
      declines: [],
      spec: {},
    }))
    await older.listen({ path: oldSock })
  })

  after(async function () {
    await app?.close()
    await older?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('job logs prints stdout and stderr apart, and says when they were truncated', async function () {
    const r = await dms('job', 'logs', 'j1', '--socket', sock)
    assert.equal(r.code, 0)
    assert.equal(r.stdout, 'out line\n')
    assert.match(r.stderr, /^err line\ndms: output truncated: .*dms job outputs j1 --out DIR\n$/)
    const j = await dms('job', 'logs', 'j1', '--socket', sock, '--json')
    assert.deepEqual(JSON.parse(j.stdout), { stdout: 'out line\n', stderr: 'err line\n', truncated: true })
    const missing = await dms('job', 'logs', 'missing', '--socket', sock)
    assert.equal(missing.code, 1)
    assert.equal(missing.stderr, 'dms: no job missing\n')
  })

  it('takes the short forms people type: logs -f, stop, ls (issue 35)', async function () {
    const follow = await dms('job', 'logs', 'pod', '-f', '--member', 'a', '--socket', sock)
    assert.equal(follow.code, 0, follow.stderr)
    assert.equal(follow.stdout, 'one\ntwo\n')
    const stop = await dms('job', 'stop', 'j1', '--socket', sock)
    assert.equal(stop.code, 0, stop.stderr)
    assert.equal(stop.stdout, 'job j1: cancelled\n')
    const ls = await dms('job', 'ls', '--socket', sock, '--json')
    assert.equal(ls.code, 0, ls.stderr)
    assert.equal((JSON.parse(ls.stdout) as { jobs: Array<{ id: string }> }).jobs[0].id, 'j9')
    const ids = await dms('job', 'ls', '-q', '--socket', sock)
    assert.equal(ids.stdout, 'j9\n')
    assert.equal((await dms('job', 'list', '-o', 'name', '--socket', sock)).stdout, 'j9\n')
    const bare = await dms('job', 'list', '--no-headers', '--socket', sock)
    assert.match(bare.stdout, /^j9 +failed /)
    const help = await dms('job', '--help')
    assert.match(help.stdout, /list\|ls /)
    assert.match(help.stdout, /cancel\|stop /)
    assert.match(help.stdout, /status\|describe /)
  })

  it('job logs --follow streams each line as it comes, until the end line', async function () {
    const child = spawn(process.execPath, ['bin/dms.js', 'job', 'logs', 'j1', '--follow', '--socket', sock])
    let out = ''
    let err = ''
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    // The server holds the rest of the stream until the client has printed the first line.
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString()
        if (out.includes('first\n')) resolve()
      }),
    )
    assert.equal(out, 'first\n')
    releaseFollow()
    const code = await new Promise((r) => child.once('exit', r))
    assert.equal(code, 0)
    assert.equal(out, 'first\nsecond\n')
    assert.equal(err, 'oops\n')
  })

  it('job logs --follow of a pod labels each line with its member; --member gives one member’s as it came', async function () {
    const all = await dms('job', 'logs', 'pod', '--follow', '--socket', sock)
    assert.equal(all.code, 0, all.stderr)
    assert.equal(all.stdout, 'a | one\nb | hi\na | two\n')
    assert.equal(all.stderr, 'b | warn\n', 'a partial last line is written at the end')
    const one = await dms('job', 'logs', 'pod', '--follow', '--member', 'a', '--socket', sock)
    assert.equal(one.code, 0, one.stderr)
    assert.equal(one.stdout, 'one\ntwo\n')
  })

  it('job outputs lists, and --out downloads every file and the archive, checking sha256', async function () {
    const list = await dms('job', 'outputs', 'j1', '--socket', sock, '--json')
    assert.equal((JSON.parse(list.stdout) as { files: unknown[] }).files.length, 2)
    const out = join(dir, 'out')
    const r = await dms('job', 'outputs', 'j1', '--socket', sock, '--out', out)
    assert.equal(r.code, 0, r.stderr)
    assert.equal(await readFile(join(out, 'answer.txt'), 'utf8'), '42')
    assert.deepEqual(await readFile(join(out, 'sub/b.bin')), Buffer.from([0, 1, 2]))
    assert.equal(await readFile(join(out, 'outputs.tar'), 'utf8'), 'TAR')
    const evil = await dms('job', 'outputs', 'evil', '--socket', sock, '--out', out)
    assert.equal(evil.code, 1)
    assert.match(evil.stderr, /^dms: refusing output path "\.\.\/escape\.txt": it leaves /)
    assert.equal(existsSync(join(dir, 'escape.txt')), false)
    // A file whose bytes do not hash as listed is not kept, nor is its partial download.
    const lied = join(dir, 'lied')
    const lying = await dms('job', 'outputs', 'lying', '--socket', sock, '--out', lied)
    assert.equal(lying.code, 1)
    assert.match(lying.stderr, /answer\.txt: sha256 \w+ does not match the listed/)
    assert.deepEqual(await readdir(lied), [])
  })

  it('job cancel prints the new state, and a refusal as one line', async function () {
    const r = await dms('job', 'cancel', 'j2', '--socket', sock)
    assert.equal(r.code, 0)
    assert.equal(r.stdout, 'job j2: cancelled\n')
    const ended = await dms('job', 'cancel', 'done', '--socket', sock)
    assert.equal(ended.code, 1)
    assert.equal(ended.stderr, 'dms: cancel refused: job done already completed\n')
  })

  it('job run --follow shows states on stderr and the live logs on stdout', async function () {
    polls = 0
    const child = spawn(process.execPath, [
      'bin/dms.js',
      'job',
      'run',
      '--follow',
      '--socket',
      sock,
      '--image',
      'i',
      '--',
      'sh',
      '-c',
      ':',
    ])
    let out = ''
    let err = ''
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString()
        if (out.includes('first\n')) resolve()
      }),
    )
    releaseFollow()
    const code = await new Promise((r) => child.once('exit', r))
    assert.equal(code, 0, err)
    assert.equal(out, 'first\nsecond\n', 'the live logs, not the final result again')
    assert.match(err, /^job j1\n +0 ms {2}bidding\n +1 ms {2}running\n/)
    assert.match(err, /2 ms {2}completed\n/)
  })

  it('job run --follow of a pod labels each live line with its member', async function () {
    polls = 0
    const r = await dms(
      'job',
      'run',
      '--follow',
      '--name',
      'pod',
      '--socket',
      sock,
      '--image',
      'i',
      '--',
      'true',
    )
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout, 'a | one\nb | hi\na | two\n')
    assert.match(r.stderr, /b \| warn\n/)
  })

  it('job list shows control characters in names as escapes, never raw', async function () {
    const r = await dms('job', 'list', '--socket', sock)
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout.includes('\u001b'), false, 'no raw ESC reaches the terminal')
    assert.equal(r.stdout.includes('\u0007'), false)
    assert.match(r.stdout, /evil\\u001b\[2J\\u001b\]0;owned\\u0007name$/m)
  })

  it('job run reads --cpu, --timeout and --max-price as decimal only: 0x10 is refused, not 16', async function () {
    const before = posted.length
    for (const [flag, value] of [
      ['--cpu', '0x10'],
      ['--cpu', ''],
      ['--timeout', '0x10'],
      ['--timeout', '1e3'],
      ['--max-price', '0b11'],
    ]) {
      const r = await dms('job', 'run', '--socket', sock, '--image', 'i', flag, value, '--', 'sh')
      assert.equal(r.code, 1, `${flag} ${value}`)
      assert.match(r.stderr, new RegExp(`^dms: ${flag}: invalid `), r.stderr)
    }
    assert.equal(posted.length, before, 'nothing was posted')
    const ok = await dms(
      'job',
      'run',
      '--socket',
      sock,
      '--image',
      'i',
      '--cpu',
      '0.25',
      '--timeout',
      '30',
      '--',
      'sh',
    )
    assert.equal(ok.code, 0, ok.stderr)
    assert.deepEqual((posted[before] as { resources: unknown }).resources, { cpu: 0.25, memory: '256MiB' })
  })

  it('an older daemon without these routes gets a clear message', async function () {
    for (const args of [
      ['job', 'logs', 'x'],
      ['job', 'logs', 'x', '--follow'],
      ['job', 'outputs', 'x'],
      ['job', 'cancel', 'x'],
    ]) {
      const r = await dms(...args, '--socket', oldSock)
      assert.equal(r.code, 1, args.join(' '))
      assert.match(
        r.stderr,
        /^dms: the daemon on .*old\.sock has no route (GET|DELETE) \/v1\/jobs\/x.*: it runs an older dms/,
      )
    }
  })
})
