/**
 * The workflow runner over a real level database, with its jobs port faked (the orchestrator's
 * journey is covered on its own; here only the states the runner sees matter): ordering, a failed
 * upstream, restore after a restart without posting a task twice, cancel, the escrow plan.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BlobStore } from '../../../dms/blobs/store.js'
import { silentLogger } from '../../../dms/log.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { jobIdOf } from '../../../dms/workflows/machine.js'
import { WorkflowRunner, type StoredWorkflow } from '../../../dms/workflows/runner.js'
import { FakeJobs } from './fake-jobs.js'

const job = {
  image: 'dms-test:1',
  command: ['true'],
  resources: { cpu: 0.5, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 100,
}
const diamond = {
  tasks: [
    { name: 'A', job },
    { name: 'B', job, runAfter: ['A'] },
    { name: 'C', job, runAfter: ['A'] },
    { name: 'D', job, runAfter: ['B', 'C'] },
  ],
}

describe('workflow runner (real level, faked jobs port)', () => {
  let dir: string
  let db: Db
  let fake: FakeJobs
  let runner: WorkflowRunner
  let blobs: BlobStore
  const make = (balance?: number) =>
    new WorkflowRunner({
      db,
      clock: { now: () => Date.now() },
      log: silentLogger,
      jobs: fake,
      blobs,
      ...(balance !== undefined ? { balance: () => Promise.resolve(balance) } : {}),
    })
  /** Resolves with the workflow once `pred` holds for a stored change of it. */
  const when = (id: string, pred: (wf: StoredWorkflow) => boolean) =>
    new Promise<StoredWorkflow>((resolve) => {
      void runner.get(id).then((wf) => wf !== undefined && pred(wf) && resolve(wf))
      const off = runner.onChange((wf) => {
        if (wf.record.id === id && pred(wf)) {
          off()
          resolve(wf)
        }
      })
    })
  const started = (id: string, task: string) => (wf: StoredWorkflow) =>
    wf.record.id === id && wf.record.tasks[task].state === 'started' && fake.jobs.has(jobIdOf(id, task))

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-wf-'))
    db = await openDb(join(dir, 'db'))
    blobs = new BlobStore({ dir: join(dir, 'blobs') })
    await blobs.start()
    fake = new FakeJobs()
    runner = make()
    await runner.start()
  })
  afterEach(async () => {
    runner.stop()
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('runs a diamond in order: B and C together once A completed, D after both', async () => {
    const wf = await runner.post(diamond)
    const id = wf.record.id
    assert.equal(wf.record.escrowPlan, 400)
    await when(id, started(id, 'A'))
    assert.deepEqual([...fake.jobs.keys()], [jobIdOf(id, 'A')])
    fake.set(jobIdOf(id, 'A'), 'completed')
    await when(id, (w) => started(id, 'B')(w) && started(id, 'C')(w))
    assert.equal(fake.jobs.has(jobIdOf(id, 'D')), false)
    fake.set(jobIdOf(id, 'B'), 'running')
    fake.set(jobIdOf(id, 'B'), 'completed')
    const afterB = await when(id, (w) => w.record.tasks.B.state === 'completed')
    assert.equal(afterB.record.tasks.D.state, 'waiting')
    fake.set(jobIdOf(id, 'C'), 'completed')
    await when(id, started(id, 'D'))
    fake.set(jobIdOf(id, 'D'), 'completed')
    const done = await when(id, (w) => w.state === 'completed')
    assert.deepEqual(
      Object.values(done.record.tasks).map((t) => t.state),
      ['completed', 'completed', 'completed', 'completed'],
    )
    assert.equal(done.snapshot, undefined)
  })

  it('a failed upstream fails its dependants UPSTREAM_FAILED, and the workflow fails', async () => {
    const { record } = await runner.post(diamond)
    const id = record.id
    await when(id, started(id, 'A'))
    fake.set(jobIdOf(id, 'A'), 'completed')
    await when(id, (w) => started(id, 'B')(w) && started(id, 'C')(w))
    fake.set(jobIdOf(id, 'B'), 'failed', { code: 'EXIT_NONZERO', message: 'exit 1' })
    const afterB = await when(id, (w) => w.record.tasks.D.state === 'failed')
    assert.equal(afterB.record.tasks.D.error?.code, 'UPSTREAM_FAILED')
    assert.equal(afterB.state, 'running', 'C still runs')
    fake.set(jobIdOf(id, 'C'), 'completed')
    const done = await when(id, (w) => w.state === 'failed')
    assert.equal(done.record.tasks.B.error?.code, 'EXIT_NONZERO')
    assert.equal(fake.jobs.has(jobIdOf(id, 'D')), false)
  })

  it('a hand-off that cannot be made fails the task HANDOFF_FAILED and its dependants UPSTREAM_FAILED', async () => {
    const { record } = await runner.post({
      tasks: [
        { name: 'A', job },
        { name: 'B', job, from: [{ fromTask: 'A', path: 'missing.txt' }] },
        { name: 'C', job, runAfter: ['B'] },
      ],
    })
    const id = record.id
    await when(id, started(id, 'A'))
    fake.set(jobIdOf(id, 'A'), 'completed') // a result with no archive: nothing to hand on
    const done = await when(id, (w) => w.state === 'failed')
    assert.equal(done.record.tasks.B.error?.code, 'HANDOFF_FAILED')
    assert.equal(done.record.tasks.C.error?.code, 'UPSTREAM_FAILED')
    assert.equal(fake.jobs.has(jobIdOf(id, 'B')), false)
  })

  it('restored after a restart: catches up with job changes it missed and posts no task twice', async () => {
    const { record } = await runner.post(diamond)
    const id = record.id
    await when(id, started(id, 'A'))
    runner.stop() // the process dies: no more changes reach it
    fake.set(jobIdOf(id, 'A'), 'completed')
    runner = make()
    assert.equal(await runner.start(), 1)
    await when(id, (w) => started(id, 'B')(w) && started(id, 'C')(w))
    for (const t of ['B', 'C']) fake.set(jobIdOf(id, t), 'completed')
    await when(id, started(id, 'D'))
    fake.set(jobIdOf(id, 'D'), 'completed')
    await when(id, (w) => w.state === 'completed')
    for (const t of ['A', 'B', 'C', 'D']) assert.equal(fake.postCount.get(jobIdOf(id, t)), 1, t)
  })

  it('cancel stops live tasks; tasks not started never start', async () => {
    const { record } = await runner.post(diamond)
    const id = record.id
    await when(id, started(id, 'A'))
    fake.set(jobIdOf(id, 'A'), 'completed')
    await when(id, (w) => started(id, 'B')(w) && started(id, 'C')(w))
    await runner.cancel(id)
    const done = await when(id, (w) => w.state === 'cancelled')
    assert.deepEqual(fake.cancelled.sort(), [jobIdOf(id, 'B'), jobIdOf(id, 'C')].sort())
    assert.equal(done.record.tasks.D.state, 'cancelled')
    assert.equal(fake.jobs.has(jobIdOf(id, 'D')), false)
    await assert.rejects(runner.cancel(id), { code: 'WORKFLOW_ENDED' })
  })

  it('inline inputs become blobs when posted; a blob that is not here is refused naming it', async () => {
    const withInput = { ...job, inputs: [{ path: 'in.txt', content: 'hello' }] }
    const { record } = await runner.post({ tasks: [{ name: 'A', job: withInput }] })
    const input = record.workflow.tasks[0].job.inputs?.[0]
    assert.equal(input?.contentBase64, undefined, 'no content in the record')
    assert.equal(Buffer.from(await blobs.read(input!.sha256!)).toString(), 'hello')
    const missing = { ...job, inputs: [{ path: 'x', sha256: 'a'.repeat(64) }] }
    await assert.rejects(
      runner.post({
        tasks: [
          { name: 'A', job },
          { name: 'B', job: missing },
        ],
      }),
      {
        code: 'INVALID_WORKFLOW',
        field: 'tasks.1.job.inputs.0.sha256',
      },
    )
  })

  it('refuses a plan the balance does not cover, saying by how much', async () => {
    runner.stop()
    runner = make(250)
    await assert.rejects(runner.post(diamond), (err: Error & { code: string; data: unknown }) => {
      assert.equal(err.code, 'INSUFFICIENT_BALANCE')
      assert.match(err.message, /short by 150/)
      assert.deepEqual(err.data, { plan: 400, balance: 250, shortfall: 150 })
      return true
    })
    assert.equal((await runner.list()).length, 0)
    runner.stop()
    runner = new WorkflowRunner({
      db,
      clock: { now: () => Date.now() },
      log: silentLogger,
      jobs: fake,
      blobs,
      balance: () => Promise.reject(new Error('no reply')),
    })
    await assert.rejects(runner.post(diamond), { code: 'BALANCE_UNKNOWN', statusCode: 503 })
  })

  it("fetches a completed task's outputs on demand; refuses an unknown task or one not completed", async () => {
    const { record } = await runner.post({
      tasks: [
        { name: 'A', job },
        { name: 'B', job, runAfter: ['A'] },
      ],
    })
    const id = record.id
    await when(id, started(id, 'A'))
    await assert.rejects(runner.outputs('nope', 'A'), { code: 'WORKFLOW_NOT_FOUND' })
    await assert.rejects(runner.outputs(id, 'Z'), { code: 'TASK_NOT_FOUND', statusCode: 404 })
    // Names the route's pattern lets through that an object inherits: no such task either.
    for (const inherited of ['constructor', 'toString', 'hasOwnProperty'])
      await assert.rejects(runner.outputs(id, inherited), { code: 'TASK_NOT_FOUND', statusCode: 404 })
    await assert.rejects(runner.outputs(id, 'A'), { code: 'OUTPUTS_NOT_READY' })
    await assert.rejects(runner.outputs(id, 'B'), { code: 'OUTPUTS_NOT_READY' })
    assert.deepEqual(fake.fetched, [])
    fake.set(jobIdOf(id, 'A'), 'completed')
    await when(id, (w) => w.record.tasks.A.state === 'completed')
    assert.deepEqual(await runner.outputs(id, 'A'), {
      task: 'A',
      jobId: jobIdOf(id, 'A'),
      files: [],
      archive: null,
    })
    assert.deepEqual(fake.fetched, [jobIdOf(id, 'A')])
  })

  it("releases every task's archive once the workflow ended; a release not answered is tried again at the next start", async () => {
    const { record } = await runner.post({
      tasks: [
        { name: 'A', job },
        { name: 'B', job, runAfter: ['A'] },
      ],
    })
    const id = record.id
    await when(id, started(id, 'A'))
    fake.set(jobIdOf(id, 'A'), 'completed')
    await when(id, started(id, 'B'))
    assert.deepEqual(fake.released, [], 'nothing is released while a task may still need it')
    fake.releaseFails = true
    const bothRefused = new Promise<void>((resolve) => {
      fake.onRelease = () => fake.refused.length === 2 && resolve()
    })
    fake.set(jobIdOf(id, 'B'), 'completed')
    await bothRefused
    assert.notEqual((await runner.get(id))?.released, true)
    runner.stop()
    fake.releaseFails = false
    runner = make()
    const released = when(id, (w) => w.released === true)
    await runner.start()
    await released
    assert.deepEqual(fake.released.sort(), [jobIdOf(id, 'A'), jobIdOf(id, 'B')].sort())
  })

  it('outputs handed on and released at the end are refused at once, 410 OUTPUTS_RELEASED, saying how to keep them', async () => {
    const handedOn = (keepOutputs?: boolean) =>
      runner.post({
        ...(keepOutputs !== undefined ? { keepOutputs } : {}),
        tasks: [
          { name: 'A', job },
          { name: 'B', job, from: [{ fromTask: 'A', path: 'x.txt' }] },
        ],
      })
    const archive = { sha256: 'ab'.repeat(32), size: 10 }
    const result = { archive, outputs: [{ path: 'x.txt', sha256: 'cd'.repeat(32), size: 1 }] } as never
    const run = async (keepOutputs?: boolean) => {
      const { record } = await handedOn(keepOutputs)
      const id = record.id
      await when(id, started(id, 'A'))
      fake.set(jobIdOf(id, 'A'), 'completed', undefined, { result, winner: { provider: 'p' } as never })
      await when(id, started(id, 'B'))
      // While it runs, a downstream task may still need it: fetched from the provider.
      await runner.outputs(id, 'A')
      fake.set(jobIdOf(id, 'B'), 'completed')
      await when(id, (w) => w.released !== undefined)
      return id
    }
    const id = await run()
    fake.fetched.length = 0
    await assert.rejects(runner.outputs(id, 'A'), (err: Error & { code?: string; statusCode?: number }) => {
      assert.equal(err.code, 'OUTPUTS_RELEASED')
      assert.equal(err.statusCode, 410)
      assert.match(err.message, /released when workflow .* ended \(completed\)/)
      assert.match(err.message, /"keepOutputs": true/)
      return true
    })
    assert.deepEqual(fake.fetched, [], 'no fetch is tried for an archive that is gone')
    // B's outputs were downloaded in its verifying (nothing downstream): still served.
    assert.equal((await runner.outputs(id, 'B')).jobId, jobIdOf(id, 'B'))
    // Fetched to this node before the end: it is here, and served.
    const here = await blobs.put(new TextEncoder().encode('kept here'))
    const id2 = await run()
    fake.jobs.get(jobIdOf(id2, 'A'))!.record.result = {
      ...(result as object),
      archive: { sha256: here, size: 9 },
    } as never
    assert.equal((await runner.outputs(id2, 'A')).jobId, jobIdOf(id2, 'A'))
    // keepOutputs: nothing was released, so the fetch goes to the provider.
    const kept = await run(true)
    assert.equal((await runner.outputs(kept, 'A')).jobId, jobIdOf(kept, 'A'))
  })

  it('keepOutputs: nothing is released when the workflow ends, and it is recorded so', async () => {
    const { record } = await runner.post({ keepOutputs: true, tasks: [{ name: 'A', job }] })
    const id = record.id
    await when(id, started(id, 'A'))
    fake.set(jobIdOf(id, 'A'), 'completed')
    const ended = await when(id, (w) => w.released !== undefined)
    assert.deepEqual([ended.state, ended.released], ['completed', false])
    assert.deepEqual(fake.released, [])
  })
})
