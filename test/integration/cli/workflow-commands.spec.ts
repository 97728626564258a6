/**
 * The workflow CLI (`dms workflow run|status|list|cancel`), run as a separate process (the built
 * CLI) against the real REST API and the real workflow runner on a real level database; only the
 * runner's jobs port is a stand-in (jobs complete when posted, or run until cancelled), so the
 * commands are tested without Docker or a network.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { cli } from '../../helpers/cli-process.js'
import { detachedPorts } from '../../../dms/api/null-ports.js'
import { ApiServer } from '../../../dms/api/server.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { silentLogger } from '../../../dms/log.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { WorkflowRunner, type WorkflowJob, type WorkflowJobs } from '../../../dms/workflows/runner.js'

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

/** Stand-in jobs: a job whose command is `sleep` runs until cancelled; any other completes at once. */
class StandInJobs implements WorkflowJobs {
  private readonly jobs = new Map<string, WorkflowJob>()
  private readonly members = new Map<string, string[]>()
  private readonly fns = new Set<(j: WorkflowJob) => void>()
  post(spec: { command: string[]; members?: Array<{ name: string }> }, id: string) {
    const job: WorkflowJob = { state: 'running', record: { id } }
    this.jobs.set(id, job)
    if (spec.members !== undefined)
      this.members.set(
        id,
        spec.members.map((m) => m.name),
      )
    if (spec.command[0] !== 'sleep') setImmediate(() => this.set(id, 'completed'))
    return Promise.resolve(job)
  }
  get(id: string) {
    return Promise.resolve(this.jobs.get(id))
  }
  cancel(id: string) {
    setImmediate(() => this.set(id, 'cancelled'))
    return Promise.resolve()
  }
  onChange(fn: (j: WorkflowJob) => void) {
    this.fns.add(fn)
    return () => this.fns.delete(fn)
  }
  outputs(id: string) {
    return Promise.resolve({
      jobId: id,
      // A pod's job: each member's x.txt under `<member>/`.
      files: (this.members.get(id) ?? ['']).map((m) => ({
        path: m === '' ? 'x.txt' : `${m}/x.txt`,
        sha256: 'ab'.repeat(32),
        size: 2,
      })),
      archive: null,
    })
  }
  release() {
    return Promise.resolve(false)
  }
  private set(id: string, state: string) {
    const job = { ...this.jobs.get(id)!, state }
    this.jobs.set(id, job)
    this.fns.forEach((f) => f(job))
  }
}

describe('dms workflow commands (built CLI, real API and runner)', function () {
  this.timeout(60_000)
  let dir: string
  let db: Db
  let runner: WorkflowRunner
  let api: ApiServer
  let sock: string
  const job = (cmd: string) => ({
    image: 'dms-test:1',
    command: [cmd],
    resources: { cpu: 0.5, memory: '64MiB' },
    maxDuration: 60,
    maxPrice: 10,
  })

  before(async function () {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    dir = await mkdtemp(join(tmpdir(), 'dms-wf-cli-'))
    db = await openDb(join(dir, 'db'))
    const blobs = new BlobStore({ dir: join(dir, 'blobs') })
    await blobs.start()
    runner = new WorkflowRunner({
      db,
      clock: { now: () => Date.now() },
      log: silentLogger,
      jobs: new StandInJobs(),
      blobs,
    })
    await runner.start()
    sock = join(dir, 'dms.sock')
    api = new ApiServer(
      { ports: { ...detachedPorts(), workflows: runner }, log: silentLogger },
      { socketPath: sock },
    )
    await api.start()
  })
  after(async () => {
    await api?.stop()
    runner?.stop()
    await db?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('run --follow prints each task change and the table; status, list and --json agree', async () => {
    const file = join(dir, 'wf.json')
    await writeFile(
      file,
      JSON.stringify({
        name: 'pair',
        tasks: [
          { name: 'one', job: job('true') },
          { name: 'two', job: job('true'), runAfter: ['one'] },
        ],
      }),
    )
    const run = await dms('workflow', 'run', '-f', file, '--follow', '--socket', sock)
    assert.equal(run.code, 0, run.stderr)
    const id = /^workflow ([0-9a-f-]{36})$/m.exec(run.stdout)?.[1]
    assert.ok(id, run.stdout)
    // Each task's change as it is seen (a task that ends within one poll shows only its end).
    assert.match(run.stdout, /ms {2}one {2}(started|completed)/)
    assert.match(run.stdout, /ms {2}two {2}completed \(completed\)/)
    assert.match(run.stdout, /^task +state +job state +job$/m)
    assert.match(run.stdout, /^two +completed +completed +[0-9a-f-]{36}$/m)

    const status = await dms('workflow', 'status', id, '--json', '--socket', sock)
    const shown = JSON.parse(status.stdout) as {
      state: string
      escrowPlan: number
      tasks: Record<string, { state: string }>
    }
    assert.deepEqual([shown.state, shown.escrowPlan, shown.tasks.one.state], ['completed', 20, 'completed'])
    const list = await dms('workflow', 'list', '--socket', sock)
    assert.match(list.stdout, /^ID +STATE +COMPLETED +CREATED +NAME$/m)
    assert.match(list.stdout, new RegExp(`^${id} {2}completed +2/2 +\\S+ +pair$`, 'm'))

    // A task's outputs fetched to the node on demand (the stand-in lists one file).
    const outputs = await dms('workflow', 'outputs', id, 'one', '--socket', sock)
    assert.equal(outputs.code, 0, outputs.stderr)
    assert.match(outputs.stdout, /^task one: job [0-9a-f-]{36}, 1 output files fetched to this node$/m)
    assert.match(outputs.stdout, /^SIZE +SHA256 +PATH$/m)
    assert.match(outputs.stdout, /^2 +abababababababab… {2}x\.txt$/m)
    const json = await dms('workflow', 'outputs', id, 'two', '--json', '--socket', sock)
    assert.equal((JSON.parse(json.stdout) as { task: string }).task, 'two')
    const unknown = await dms('workflow', 'outputs', id, 'three', '--socket', sock)
    assert.equal(unknown.code, 1)
    assert.match(unknown.stderr, /has no task three/)
  })

  it('a refused document exits 1 naming the field; cancel stops a running workflow, whose --wait exits 2', async () => {
    const bad = join(dir, 'bad.json')
    await writeFile(bad, JSON.stringify({ tasks: [{ name: 'a', job: job('true'), runAfter: ['ghost'] }] }))
    const refused = await dms('workflow', 'run', '-f', bad, '--socket', sock)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /workflow refused: tasks\.0\.runAfter\.0: no task named ghost/)

    const long = join(dir, 'long.json')
    await writeFile(
      long,
      JSON.stringify({
        tasks: [
          { name: 'slow', job: job('sleep') },
          { name: 'next', job: job('true'), runAfter: ['slow'] },
        ],
      }),
    )
    // Posted by `run --wait`; cancelled by `cancel` once the runner has stored it running.
    const stored = new Promise<string>((resolve) => {
      const off = runner.onChange((w) => {
        if (w.record.tasks.slow?.state === 'started') {
          off()
          resolve(w.record.id)
        }
      })
    })
    const waiting = dms('workflow', 'run', '-f', long, '--wait', '--socket', sock)
    const id = await stored
    const cancel = await dms('workflow', 'cancel', id, '--socket', sock)
    assert.equal(cancel.stdout.trim(), `${id} cancelling`)
    const waited = await waiting
    assert.equal(waited.code, 2)
    assert.match(waited.stderr, new RegExp(`workflow ${id} cancelled`))
    assert.match(waited.stdout, /^slow +cancelled +cancelled/m)
    assert.match(waited.stdout, /^next +cancelled +- +-$/m)
  })

  it("status shows each pod's tasks with their pod; a pod task's outputs are its subtree", async () => {
    const file = join(dir, 'pod.json')
    await writeFile(
      file,
      JSON.stringify({
        tasks: [
          { name: 'left', job: job('true'), pod: 'pair' },
          { name: 'right', job: job('true'), pod: 'pair' },
          { name: 'after', job: job('true'), runAfter: ['left'] },
        ],
      }),
    )
    const run = await dms('workflow', 'run', '-f', file, '--wait', '--socket', sock)
    assert.equal(run.code, 0, run.stderr)
    const id = /^workflow ([0-9a-f-]{36})$/m.exec(run.stdout)?.[1] as string
    const status = await dms('workflow', 'status', id, '--socket', sock)
    assert.match(status.stdout, /^task +pod +state +job state +job$/m)
    const podJob = /^left +pair +completed +completed +([0-9a-f-]{36})$/m.exec(status.stdout)?.[1]
    assert.ok(podJob, status.stdout)
    assert.match(status.stdout, new RegExp(`^right +pair +completed +completed +${podJob}$`, 'm'))
    assert.match(status.stdout, /^after +- +completed +completed +[0-9a-f-]{36}$/m)
    assert.doesNotMatch(status.stdout, new RegExp(`^after .*${podJob}`, 'm'))
    const outputs = await dms('workflow', 'outputs', id, 'right', '--socket', sock)
    assert.equal(outputs.code, 0, outputs.stderr)
    assert.match(
      outputs.stdout,
      new RegExp(`^task right: job ${podJob} \\(pod pair: its files under right/\\), 1 output files`, 'm'),
    )
    assert.match(outputs.stdout, /^2 +abababababababab… {2}right\/x\.txt$/m)
    assert.doesNotMatch(outputs.stdout, /left\/x\.txt/)
    const ghost = await dms('workflow', 'logs', id, 'ghost', '--socket', sock)
    assert.equal(ghost.code, 1)
    assert.match(ghost.stderr, /workflow [0-9a-f-]{36} has no task ghost/)
  })

  it('takes a workflow by name or id prefix (an ambiguous one refused, naming the ids); status -w follows it to its end', async () => {
    const twin = { name: 'twin', tasks: [{ name: 'slow', job: job('sleep') }] }
    const a = (await runner.post(twin)).record.id
    const b = (await runner.post(twin)).record.id
    const ambiguous = await dms('workflow', 'status', 'twin', '--socket', sock)
    assert.equal(ambiguous.code, 1)
    assert.match(
      ambiguous.stderr,
      new RegExp(`workflow "twin" is ambiguous: (${a}, ${b}|${b}, ${a}); give more`),
    )
    const byPrefix = await dms('workflow', 'status', a.slice(0, 8), '--socket', sock)
    assert.equal(byPrefix.code, 0, byPrefix.stderr)
    assert.match(byPrefix.stdout, new RegExp(`^${a} {2}running {2}\\(twin\\)`))

    // Watched: printed, then printed again from the workflow's events once cancelled; it ends with it.
    const w = cli('workflow', 'status', '-w', a.slice(0, 8), '--socket', sock)
    await w.printed(`${a}  running`)
    const cancel = await dms('workflow', 'stop', a.slice(0, 8), '--socket', sock)
    assert.equal(cancel.stdout.trim(), `${a} cancelling`)
    assert.equal(await w.exited, 0, w.err())
    assert.match(w.out(), new RegExp(`\\n\\n${a} {2}cancelled {2}\\(twin\\)`))
    assert.match(w.out(), /^slow +cancelled +cancelled/m)
    await dms('workflow', 'cancel', b, '--socket', sock)
  })
})
