/**
 * `dms job run --wait` and `dms job list | head -1` (issue 20), the built CLI as a separate
 * process against a stand-in daemon (Fastify on a unix socket) serving the REST route contract:
 * --wait keeps stdout for the job's own output (states and the job's stderr on stderr) and exits
 * with the container's exit code; a reader that closes the pipe early is not an error; the job-run
 * flags users bring (--env, --disk, --gpu, 10m) and -f refusing flags beside it; Ctrl-C while
 * waiting, logs of a job that never ran, and outputs that would overwrite files.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Fastify, { type FastifyInstance } from 'fastify'

const exec = promisify(execFile)

async function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(file, args, { timeout: 60_000 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number; stdout: string; stderr: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr }
  }
}

describe('dms job run --wait and piped output (issue 20)', function () {
  this.timeout(60_000)
  let dir: string
  let sock: string
  let app: FastifyInstance
  const posted: unknown[] = []

  before(async () => {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    dir = await mkdtemp(join(tmpdir(), 'dms-wait-'))
    sock = join(dir, 'dms.sock')
    app = Fastify()
    // Many jobs: more output than a pipe holds, so writes go on after `head -1` has exited.
    app.get('/v1/jobs', () => ({
      jobs: [
        ...Array.from({ length: 20_000 }, (_, i) => ({
          id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          state: 'completed',
          createdAt: 1_700_000_000_000 - i,
        })),
        { id: 'abcdef12-3456-4789-8abc-def012345678', state: 'completed', createdAt: 0 },
      ],
    }))
    app.post('/v1/jobs', (req, reply) => {
      posted.push(req.body)
      const exit = (req.body as { command: string[] }).command.at(-1)
      return reply.status(201).send({ id: `job-${exit}`, state: 'bidding' })
    })
    app.get('/v1/jobs/:id', (req) => {
      const { id } = req.params as { id: string }
      if (id === 'job-hang')
        return {
          id,
          state: 'running',
          spec: {},
          history: [
            { state: 'bidding', at: 1 },
            { state: 'running', at: 2 },
          ],
          bids: [],
          declines: [],
        }
      if (id === 'job-nobids')
        return {
          id,
          state: 'failed',
          spec: {},
          history: [
            { state: 'bidding', at: 1 },
            { state: 'failed', at: 2 },
          ],
          bids: [],
          declines: [],
          error: { code: 'NO_BIDS', message: 'no provider answered the bid request' },
        }
      if (id === 'job-trunc')
        return {
          id,
          state: 'completed',
          spec: {},
          history: [
            { state: 'bidding', at: 1 },
            { state: 'completed', at: 2 },
          ],
          bids: [],
          declines: [],
          // Cut by the provider's cap in the middle of a line.
          result: {
            stdout: 'line 1\nline 2 is cu',
            stderr: '',
            truncated: true,
            receipt: { receipt: { exitCode: 0 } },
          },
        }
      const exitCode = Number((req.params as { id: string }).id.slice(4))
      const state = exitCode === 0 ? 'completed' : 'failed'
      return {
        id: (req.params as { id: string }).id,
        state,
        spec: {},
        history: [
          { state: 'bidding', at: 1000 },
          { state: 'running', at: 1100 },
          { state, at: 1200 },
        ],
        bids: [],
        declines: [],
        result: { stdout: 'job says hi\n', stderr: 'job warns\n', receipt: { receipt: { exitCode } } },
        error: exitCode === 0 ? undefined : { code: 'RUN_FAILED', message: `exit code ${exitCode}` },
      }
    })
    app.post('/v1/quotes', (req) => {
      posted.push(req.body)
      return { bids: [], declines: [] }
    })
    app.get('/v1/jobs/:id/logs', (req) =>
      (req.params as { id: string }).id === 'job-trunc'
        ? { stdout: 'line 1\nline 2 is cu', stderr: '', truncated: true }
        : { stdout: '', stderr: '', truncated: false },
    )
    app.get('/v1/jobs/:id/outputs', () => ({
      archive: null,
      files: [{ path: 'a.txt', sha256: createHash('sha256').update('42').digest('hex'), size: 2 }],
    }))
    app.get('/v1/jobs/:id/outputs/a.txt', () => '42')
    await app.listen({ path: sock })
  })
  after(async () => {
    await app?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it("--wait: stdout is the job's output only, its stderr and the states go to stderr, exit 0", async () => {
    const r = await run(process.execPath, [
      'bin/dms.js',
      'job',
      'run',
      '--socket',
      sock,
      '--wait',
      '--image',
      'x:1',
      '--',
      'sh',
      '0',
    ])
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout, 'job says hi\n')
    assert.match(r.stderr, /job warns/)
    assert.match(r.stderr, /completed/)
  })

  it("--wait exits with the container's exit code", async () => {
    const r = await run(process.execPath, [
      'bin/dms.js',
      'job',
      'run',
      '--socket',
      sock,
      '--wait',
      '--image',
      'x:1',
      '--',
      'sh',
      '3',
    ])
    assert.equal(r.code, 3, r.stderr)
    assert.equal(r.stdout, 'job says hi\n')
    assert.match(r.stderr, /RUN_FAILED: exit code 3/)
  })

  it('--wait and job logs say when the provider cut the output, and how to get all of it (issue 35)', async () => {
    const r = await run(process.execPath, [
      'bin/dms.js',
      'job',
      'run',
      '--socket',
      sock,
      '--wait',
      '--image',
      'x:1',
      '--',
      'sh',
      'trunc',
    ])
    assert.equal(r.code, 0, r.stderr)
    // stdout stays the job's bytes as kept; the note is stderr's last line.
    assert.equal(r.stdout, 'line 1\nline 2 is cu')
    const last = r.stderr.trimEnd().split('\n').at(-1) ?? ''
    assert.match(last, /^dms: output truncated: .*256 KiB/)
    assert.match(last, /dms job outputs job-trunc --out DIR$/)
    const logs = await run(process.execPath, ['bin/dms.js', 'job', 'logs', 'job-trunc', '--socket', sock])
    assert.equal(logs.stdout, 'line 1\nline 2 is cu')
    assert.match(logs.stderr, /^dms: output truncated: .*dms job outputs job-trunc --out DIR\n$/)
  })

  it('job list | head -2 prints the header and one job, no EPIPE trace, and dms exits 0', async () => {
    const r = await run('bash', [
      '-c',
      `${process.execPath} bin/dms.js job list --socket ${sock} | head -2; echo "dms=\${PIPESTATUS[0]}" >&2`,
    ])
    assert.equal(r.stdout.split('\n').length, 3, r.stdout)
    assert.match(r.stdout, /^ID +STATE.*\n00000000-0000-4000-8000-000000000000 /)
    assert.doesNotMatch(r.stderr, /EPIPE|Error|at /)
    assert.match(r.stderr, /dms=0/)
  })

  it('job run takes --env K=V, --disk, --gpu and durations like 10m', async () => {
    const n = posted.length
    const r = await run(process.execPath, [
      'bin/dms.js',
      'job',
      'run',
      '--socket',
      sock,
      '--image',
      'x:1',
      '--env',
      'A=1',
      '--env',
      'B=x=y',
      '--disk',
      '1GiB',
      '--gpu',
      '1',
      '--timeout',
      '1h30m',
      '--',
      'sh',
      '0',
    ])
    assert.equal(r.code, 0, r.stderr)
    const body = posted[n] as { env: unknown; resources: unknown; maxDuration: number }
    assert.deepEqual(body.env, { A: '1', B: 'x=y' })
    assert.deepEqual(body.resources, { cpu: 1, memory: '256MiB', disk: '1GiB', gpu: 1 })
    assert.equal(body.maxDuration, 5400)
  })

  it('job run takes cpu in millicores and sizes as Docker writes them (issue 35)', async () => {
    const n = posted.length
    const args = ['bin/dms.js', 'job', 'run', '--socket', sock, '--image', 'x:1']
    const r = await run(process.execPath, [...args, '--cpu', '500m', '--memory', '64m', '--', 'sh', '0'])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual((posted[n] as { resources: unknown }).resources, { cpu: 0.5, memory: '64m' })
    const bad = await run(process.execPath, [...args, '--cpu', '500x', '--', 'sh', '0'])
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /^dms: --cpu: invalid CPU amount "500x": .*500m\n$/)
    const size = await run(process.execPath, [...args, '--memory', '64 parsecs', '--', 'sh', '0'])
    assert.equal(size.code, 1)
    assert.match(size.stderr, /^dms: --memory: invalid size "64 parsecs": unknown unit "parsecs".*64m\n$/)
    assert.equal(posted.length, n + 1, 'a refused --cpu or --memory posted nothing')
  })

  it('job run takes -e for --env, and job describe is job status (issue 35)', async () => {
    const n = posted.length
    const r = await run(process.execPath, [
      'bin/dms.js',
      'job',
      'run',
      '--socket',
      sock,
      '--image',
      'x:1',
      '-e',
      'A=1',
      '-e',
      'B=2',
      '--',
      'sh',
      '0',
    ])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual((posted[n] as { env: unknown }).env, { A: '1', B: '2' })
    const d = await run(process.execPath, ['bin/dms.js', 'job', 'describe', 'job-0', '--socket', sock])
    assert.equal(d.code, 0, d.stderr)
    assert.match(d.stdout, /^job-0 {2}completed\n/)
  })

  it('job quote takes --gpu, --disk and -e/--env as job run does (issue 35)', async () => {
    const n = posted.length
    const r = await run(process.execPath, [
      'bin/dms.js',
      'job',
      'quote',
      '--socket',
      sock,
      '--image',
      'x:1',
      '--gpu',
      '1',
      '--disk',
      '1g',
      '-e',
      'A=1',
      '--env',
      'B=2',
      '--',
      'sh',
      '0',
    ])
    assert.equal(r.code, 0, r.stderr)
    const body = posted[n] as { env: unknown; resources: unknown }
    assert.deepEqual(body.env, { A: '1', B: '2' })
    assert.deepEqual(body.resources, { cpu: 1, memory: '256MiB', disk: '1g', gpu: 1 })
  })

  it('job run -f refuses spec flags given with it, naming them, instead of ignoring them', async () => {
    const n = posted.length
    const file = join(dir, 'spec.json')
    await writeFile(
      file,
      JSON.stringify({
        image: 'x:1',
        command: ['sh', '0'],
        resources: { cpu: 1, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1,
      }),
    )
    const r = await run(process.execPath, [
      'bin/dms.js',
      'job',
      'run',
      '--socket',
      sock,
      '-f',
      file,
      '--cpu',
      '2',
      '--timeout',
      '10m',
    ])
    assert.equal(r.code, 1)
    assert.match(r.stderr, /--cpu, --timeout: not combined with -f/)
    assert.equal(posted.length, n, 'nothing was posted')
    const ok = await run(process.execPath, [
      'bin/dms.js',
      'job',
      'run',
      '--socket',
      sock,
      '-f',
      file,
      '--wait',
    ])
    assert.equal(ok.code, 0, ok.stderr)
  })

  it('Ctrl-C during --wait says the job goes on and how to re-attach or cancel it', async () => {
    const child = spawn(process.execPath, [
      'bin/dms.js',
      'job',
      'run',
      '--socket',
      sock,
      '--wait',
      '--image',
      'x:1',
      '--',
      'hang',
    ])
    let err = ''
    await new Promise<void>((resolve) =>
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString()
        if (/running/.test(err)) resolve()
      }),
    )
    const code = new Promise((r) => child.once('exit', r))
    child.kill('SIGINT')
    assert.equal(await code, 130)
    assert.match(err, /job job-hang goes on/)
    assert.match(err, /dms job logs job-hang --follow/)
    assert.match(err, /dms job cancel job-hang/)
  })

  it('job logs on a job that never ran says so', async () => {
    const r = await run(process.execPath, ['bin/dms.js', 'job', 'logs', '--socket', sock, 'job-nobids'])
    assert.equal(r.code, 1)
    assert.match(r.stderr, /job job-nobids never ran \(failed: NO_BIDS: no provider answered/)
  })

  it('job outputs --out refuses to overwrite a file unless --force', async () => {
    const out = join(dir, 'out')
    const first = await run(process.execPath, [
      'bin/dms.js',
      'job',
      'outputs',
      '--socket',
      sock,
      'job-0',
      '--out',
      out,
    ])
    assert.equal(first.code, 0, first.stderr)
    await writeFile(join(out, 'a.txt'), 'mine')
    const again = await run(process.execPath, [
      'bin/dms.js',
      'job',
      'outputs',
      '--socket',
      sock,
      'job-0',
      '--out',
      out,
    ])
    assert.equal(again.code, 1)
    assert.match(again.stderr, /a\.txt already exist: give --force/)
    assert.equal(readFileSync(join(out, 'a.txt'), 'utf8'), 'mine', 'nothing was overwritten')
    const forced = await run(process.execPath, [
      'bin/dms.js',
      'job',
      'outputs',
      '--socket',
      sock,
      'job-0',
      '--out',
      out,
      '--force',
    ])
    assert.equal(forced.code, 0, forced.stderr)
    assert.equal(readFileSync(join(out, 'a.txt'), 'utf8'), '42')
  })

  it('job commands take a unique id prefix, and refuse an ambiguous one', async () => {
    const full = 'abcdef12-3456-4789-8abc-def012345678'
    const one = await run(process.execPath, ['bin/dms.js', 'job', 'status', '--socket', sock, 'abcdef'])
    assert.equal(one.code, 0, one.stderr)
    assert.match(one.stdout, new RegExp(`^${full} `))
    const many = await run(process.execPath, ['bin/dms.js', 'job', 'status', '--socket', sock, '0000'])
    assert.equal(many.code, 1)
    assert.match(many.stderr, /job id 0000 is ambiguous: 00000000-0000-4000-8000-000000000000, /)
  })
})
