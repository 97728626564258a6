import assert from 'node:assert/strict'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'

const exec = promisify(execFile)
const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'

interface ProcView {
  name: string
  peerId: string
  socket: string
  dataDir: string
}
interface Ready {
  event: 'devnet-ready'
  root: string
  contractDb: ProcView
  providers: ProcView[]
  requester: ProcView & { tcp: string; tokenFile: string }
}

/** Runs the built CLI; resolves with its exit code and output (never rejects on a non-zero exit). */
async function dms(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/dms.js', ...args], { timeout: 60_000 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number; stdout: string; stderr: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr }
  }
}

/** A plain HTTP GET (over the unix socket or TCP). */
function get(
  target: { socketPath: string } | { host: string; port: number },
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; type?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ ...target, path, headers }, (res) => {
      let body = ''
      res.on('data', (c: Buffer) => (body += c.toString('utf8')))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: res.headers['content-type'] }))
    })
    req.on('error', reject)
    req.end()
  })
}

// The operator's and user's path: only the CLI and the REST API of separate processes
// (`dms devnet`: a contract-db, a provider and a requester), through the built CLI.
describe('dms CLI against a devnet of separate processes', function () {
  this.timeout(120_000)
  let devnet: ChildProcess
  let ready: Ready
  let exited: Promise<number | null>
  let dir: string
  const lines: unknown[] = []

  before(async function () {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    dir = await mkdtemp(join(tmpdir(), 'dms-e2e-devnet-'))
    // --dir keeps the data and logs, so the test can check what each process left at stop.
    devnet = spawn(process.execPath, ['bin/dms.js', 'devnet', '--providers', '1', '--json', '--dir', dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    exited = new Promise((r) => devnet.once('exit', (code) => r(code)))
    const out = createInterface({ input: devnet.stdout! })
    ready = await new Promise<Ready>((resolve, reject) => {
      devnet.once('exit', (code) => reject(new Error(`dms devnet exited (code ${code}) before it was ready`)))
      out.on('line', (l) => {
        const v = JSON.parse(l) as { event?: string }
        lines.push(v)
        if (v.event === 'devnet-ready') resolve(v as Ready)
      })
    })
  })

  after(async function () {
    if (devnet.exitCode === null && devnet.signalCode === null) devnet.kill('SIGINT')
    await exited
    await rm(dir, { recursive: true, force: true })
  })

  it('runs a job with --wait to settlement and shows it in list and status', async function () {
    const sock = ready.requester.socket
    const run = await dms(
      'job',
      'run',
      '--socket',
      sock,
      '--wait',
      '--json',
      '--image',
      IMAGE,
      '--cpu',
      '0.5',
      '--memory',
      '64MiB',
      '--timeout',
      '30',
      '--',
      'sh',
      '-c',
      'echo hello from the devnet; echo -n 42 > /outputs/answer.txt',
    )
    assert.equal(run.code, 0, run.stderr)
    const job = JSON.parse(run.stdout) as {
      id: string
      state: string
      result: { stdout: string }
      settlement: { paidToProvider: number }
      winner: { provider: string }
    }
    assert.equal(job.state, 'completed')
    assert.equal(job.result.stdout, 'hello from the devnet\n')
    assert.equal(job.winner.provider, ready.providers[0].peerId)
    assert.ok(job.settlement.paidToProvider > 0)

    const list = JSON.parse((await dms('job', 'list', '--socket', sock, '--json')).stdout) as {
      jobs: Array<{ id: string; state: string; provider: string }>
    }
    assert.deepEqual(
      list.jobs.map((j) => [j.id, j.state, j.provider]),
      [[job.id, 'completed', ready.providers[0].peerId]],
    )
    const wide = await dms('job', 'list', '--socket', sock, '-o', 'wide')
    assert.match(wide.stdout, /^ID +STATE +CREATED +QUEUE +PROVIDER +RERUN OF +NAME$/m)
    assert.match(
      wide.stdout,
      new RegExp(`^${job.id} +completed +\\S+ +- +${ready.providers[0].peerId} +-`, 'm'),
    )
    const status = JSON.parse((await dms('job', 'status', job.id, '--socket', sock, '--json')).stdout) as {
      allocation: { id: string; provider: string; state: string }
      usage: { wallSeconds: number }
    }
    assert.equal(status.allocation.provider, ready.providers[0].peerId)
    // The provider's last update: `completed`, then `released` once its resources are freed.
    assert.ok(['completed', 'released'].includes(status.allocation.state), status.allocation.state)
    assert.ok(status.usage.wallSeconds > 0)
    const human = await dms('job', 'status', job.id, '--socket', sock)
    assert.match(human.stdout, new RegExp(`^${job.id} {2}completed`))
    assert.match(human.stdout, /settled: paid \d+, refunded \d+/)

    // Its logs and outputs, through the CLI: the output file is fetched, checked and written.
    const logs = await dms('job', 'logs', job.id, '--socket', sock)
    assert.equal(logs.code, 0, logs.stderr)
    assert.equal(logs.stdout, 'hello from the devnet\n')
    const out = join(dir, 'outputs-cli')
    const got = await dms('job', 'outputs', job.id, '--socket', sock, '--out', out)
    assert.equal(got.code, 0, got.stderr)
    assert.equal(await readFile(join(out, 'answer.txt'), 'utf8'), '42')
    assert.ok(existsSync(join(out, 'outputs.tar')), 'the archive is saved beside the files')
    const refused = await dms('job', 'cancel', job.id, '--socket', sock)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /^dms: cancel refused: /)

    // The provider's side: the allocation, and the job counted in the requester's metrics.
    const allocs = JSON.parse(
      (await get({ socketPath: ready.providers[0].socket }, '/v1/allocations')).body,
    ) as {
      allocations: Array<{ jobId: string; state: string; requester: string }>
    }
    assert.deepEqual(
      allocs.allocations.map((a) => [a.jobId, a.requester]),
      [[job.id, ready.requester.peerId]],
    )
    const metrics = await get({ socketPath: sock }, '/metrics')
    assert.equal(metrics.type, 'text/plain; version=0.0.4; charset=utf-8')
    assert.match(metrics.body, /^dms_jobs\{state="completed"\} 1$/m)
    assert.match(metrics.body, /^dms_requester_paid_total [1-9]\d*$/m)
    const pm = await get({ socketPath: ready.providers[0].socket }, '/metrics')
    assert.match(pm.body, /^dms_allocations\{state="released"\} 1$/m)
  })

  it('runs the command in --workdir (the workload carries it to the container), and refuses a relative one', async function () {
    const sock = ready.requester.socket
    const args = ['job', 'run', '--socket', sock, '--wait', '--json', '--image', IMAGE, '--cpu', '0.5']
    const run = await dms(...args, '--memory', '64MiB', '--timeout', '30', '--workdir', '/tmp', '--', 'pwd')
    assert.equal(run.code, 0, run.stderr)
    const job = JSON.parse(run.stdout) as { state: string; result: { stdout: string } }
    assert.equal(job.state, 'completed')
    assert.equal(job.result.stdout, '/tmp\n')
    const relative = await dms(...args, '--workdir', 'tmp', '--', 'pwd')
    assert.notEqual(relative.code, 0)
    assert.match(relative.stderr, /workdir/)
  })

  it('fails a job it cannot place with exit code 2 and a one-line reason after the states', async function () {
    const run = await dms(
      'job',
      'run',
      '--socket',
      ready.requester.socket,
      '--wait',
      '--image',
      IMAGE,
      '--cpu',
      '16',
      '--',
      'sh',
      '-c',
      ':',
    )
    assert.equal(run.code, 2)
    // The states went to stderr (stdout is the job's own output: none), then the one-line reason.
    assert.equal(run.stdout, '')
    assert.match(
      run.stderr.trim().split('\n').at(-1) ?? '',
      /^dms: job [0-9a-f-]+ failed: no provider bid: .*not enough cpu/,
    )
  })

  it('follows a running job live, and cancels it: the container stops and the time used is paid', async function () {
    const sock = ready.requester.socket
    const posted = await dms(
      'job',
      'run',
      '--socket',
      sock,
      '--json',
      '--image',
      IMAGE,
      '--cpu',
      '0.5',
      '--memory',
      '64MiB',
      '--timeout',
      '60',
      '--',
      'sh',
      '-c',
      'echo started; sleep 30',
    )
    assert.equal(posted.code, 0, posted.stderr)
    const { id } = JSON.parse(posted.stdout) as { id: string }
    // `job logs --follow` prints the live output; once "started" shows, the job is running.
    const follow = spawn(process.execPath, ['bin/dms.js', 'job', 'logs', id, '--follow', '--socket', sock], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const followed = new Promise<number | null>((r) => follow.once('exit', (code) => r(code)))
    let seen = ''
    await new Promise<void>((resolve, reject) => {
      follow.stdout.on('data', (d: Buffer) => {
        seen += d.toString()
        if (seen.includes('started')) resolve()
      })
      follow.once('exit', () => reject(new Error(`job logs --follow ended before the output: ${seen}`)))
    })
    // The provider's `dms resources` names the run by the allocation id that `job status` shows.
    const running = JSON.parse((await dms('job', 'status', id, '--socket', sock, '--json')).stdout) as {
      allocationId: string
    }
    const p = ready.providers[0]
    const res = await dms('resources', '--data-dir', p.dataDir, '--socket', p.socket, '--json')
    const { entries } = JSON.parse(res.stdout) as {
      entries: Array<{ state: string; jobId: string; allocationId?: string }>
    }
    const entry = entries.find((e) => e.jobId === id)
    assert.equal(entry?.state, 'allocated')
    assert.equal(entry?.allocationId, running.allocationId)
    const table = await dms('resources', '--data-dir', p.dataDir, '--socket', p.socket)
    assert.match(table.stdout, /^STATE +ALLOCATION +JOB +CPU/m)
    assert.match(table.stdout, new RegExp(`^allocated +${running.allocationId} +${id} `, 'm'))
    const cancel = await dms('job', 'cancel', id, '--socket', sock, '--json')
    assert.equal(cancel.code, 0, cancel.stderr)
    assert.equal((JSON.parse(cancel.stdout) as { id: string }).id, id)
    assert.equal(await followed, 0, 'the follow ends when the job does')
    const status = JSON.parse((await dms('job', 'status', id, '--socket', sock, '--json')).stdout) as {
      state: string
      settlement: { outcome: string; reason: string; paidToProvider: number; refundedToRequester: number }
    }
    assert.equal(status.state, 'cancelled')
    assert.equal(status.settlement.outcome, 'terminated')
    assert.equal(status.settlement.reason, 'REQUESTER_CANCELLED')
    assert.ok(status.settlement.refundedToRequester > 0, 'most of the escrow comes back')
  })

  it('stages an --input file for the job, and posts again the spec `job status --json` shows', async function () {
    const sock = ready.requester.socket
    const file = join(dir, 'data.txt')
    await writeFile(file, 'input bytes\n')
    const run = await dms(
      'job',
      'run',
      '--socket',
      sock,
      '--wait',
      '--json',
      '--input',
      `${file}:/inputs/in/data.txt`,
      '--image',
      IMAGE,
      '--cpu',
      '0.5',
      '--memory',
      '64MiB',
      '--timeout',
      '30',
      '--',
      'cat',
      '/inputs/in/data.txt',
    )
    assert.equal(run.code, 0, run.stderr)
    type Done = { id: string; state: string; spec: unknown; result: { stdout: string } }
    const first = JSON.parse(run.stdout) as Done
    assert.equal(first.result.stdout, 'input bytes\n', 'the job read the uploaded file at its path')
    // What `job status --json` prints, saved and given to `job run -f` as it is.
    const statusFile = join(dir, 'status.json')
    await writeFile(statusFile, (await dms('job', 'status', first.id, '--socket', sock, '--json')).stdout)
    const human = await dms('job', 'status', first.id, '--socket', sock)
    assert.match(human.stdout, /^input: \/inputs\/in\/data\.txt {2}blob [0-9a-f]{16}… {2}12 bytes$/m)
    const again = await dms('job', 'run', '--socket', sock, '--wait', '--json', '-f', statusFile)
    assert.equal(again.code, 0, again.stderr)
    const second = JSON.parse(again.stdout) as Done
    assert.notEqual(second.id, first.id)
    assert.equal(second.state, 'completed')
    assert.equal(second.result.stdout, 'input bytes\n')
    assert.deepEqual(second.spec, first.spec, 'the same spec was posted again')
  })

  it('lists peers and resources through the CLI', async function () {
    const { peers } = JSON.parse(
      (await dms('peers', '--socket', ready.requester.socket, '--json')).stdout,
    ) as {
      peers: Array<{ peerId: string; bidTopic: boolean }>
    }
    const provider = peers.find((p) => p.peerId === ready.providers[0].peerId)
    assert.ok(provider, 'the provider is not among the peers')
    assert.equal(provider.bidTopic, true)
    const table = await dms('peers', '--socket', ready.requester.socket)
    assert.match(table.stdout, /^PEER +ROLES +CONNECTION +LATENCY +DIRECTION +BIDS +SCORE$/m)
    assert.match(table.stdout, new RegExp(`^${provider.peerId} +provider +direct `, 'm'))
    const wide = await dms('peers', '--socket', ready.requester.socket, '-o', 'wide')
    assert.match(wide.stdout, / +SCORE +ADDRESSES$/m)
    assert.match(wide.stdout, /\/ip4\/127\.0\.0\.1\/tcp\//)

    const p = ready.providers[0]
    const res = await dms('resources', '--data-dir', p.dataDir, '--socket', p.socket, '--json')
    assert.equal(res.code, 0, res.stderr)
    const view = JSON.parse(res.stdout) as { status: string; offer: { resources: { cpu: number } } }
    assert.equal(view.status, 'onboarded')
    assert.equal(view.offer.resources.cpu, 1)
  })

  it('keeps the socket and the token private, and the TCP listener needs the token', async function () {
    for (const path of [ready.requester.socket, ready.requester.tokenFile])
      assert.equal((await stat(path)).mode & 0o777, 0o600, path)
    const token = (await readFile(ready.requester.tokenFile, 'utf8')).trim()
    const [host, port] = [ready.requester.tcp.split(':')[0], Number(ready.requester.tcp.split(':')[1])]
    assert.equal(host, '127.0.0.1')
    const none = await get({ host, port }, '/v1/health')
    assert.equal(none.status, 401)
    assert.equal((JSON.parse(none.body) as { error: { code: string } }).error.code, 'UNAUTHORIZED')
    assert.equal((await get({ host, port }, '/v1/jobs', { authorization: `Bearer ${token}x` })).status, 401)
    const ok = await get({ host, port }, '/v1/health', { authorization: `Bearer ${token}` })
    assert.equal(ok.status, 200)
    assert.deepEqual(JSON.parse(ok.body), { ok: true })
  })

  it('serves the OpenAPI document that is committed in specs/', async function () {
    const served = await get({ socketPath: ready.requester.socket }, '/v1/openapi.json')
    assert.deepEqual(JSON.parse(served.body), JSON.parse(await readFile('specs/openapi.json', 'utf8')))
  })

  it('says when the data dir is in use, or when no daemon runs', async function () {
    const again = await dms('run', '--config', join(ready.root, 'requester.json'))
    assert.equal(again.code, 1)
    assert.equal(
      again.stderr,
      `dms: another dms is using the data directory ${ready.requester.dataDir}: stop it first, or choose another --data-dir\n`,
    )
    const none = await dms('job', 'list', '--socket', join(ready.root, 'nothing.sock'))
    assert.equal(none.code, 1)
    assert.match(none.stderr, /^dms: no dms daemon answers on .*nothing\.sock: start one with 'dms run/)
  })

  it('stops every process on SIGINT, each one cleanly', async function () {
    devnet.kill('SIGINT')
    assert.equal(await exited, 0)
    assert.deepEqual(lines.at(-1), {
      event: 'devnet-stopped',
      exits: { 'contract-db': 0, 'provider-a': 0, requester: 0 },
    })
    for (const p of [ready.contractDb, ...ready.providers, ready.requester])
      assert.equal(existsSync(p.socket), false, `${p.name} left its socket`)
    // The nodes logged their orderly stop (dms run: "stopping", then "stopped" with its duration).
    for (const name of ['provider-a', 'requester']) {
      const log = (await readFile(join(dir, `${name}.log`), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { msg: string; sig?: string; ms?: number })
      const stopping = log.findIndex((l) => l.msg.startsWith('stopping'))
      assert.ok(stopping >= 0, `${name} did not log its stop`)
      assert.equal(log[stopping].sig, 'SIGTERM')
      assert.equal(log.at(-1)?.msg, 'stopped', `${name}: ${JSON.stringify(log.at(-1))}`)
    }
  })
})
