/**
 * The workflow runner's pods (specs/workflow.md, "Pods") over a real level database, its jobs port
 * faked: a pod's tasks become ONE job (its members), each task's row follows that job, hand-offs
 * downstream read a member's subtree, a failure or a cancel reaches the whole pod, and a restart
 * posts the pod's job once.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BlobStore } from '../../../dms/blobs/store.js'
import { silentLogger } from '../../../dms/log.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { jobIdOf, podJobIdOf } from '../../../dms/workflows/machine.js'
import { WorkflowRunner, type StoredWorkflow } from '../../../dms/workflows/runner.js'
import { FakeJobs } from './fake-jobs.js'

/** A workflow as main stored it (before pods): A started (bidding), B waiting for A's a.txt. */
const MAIN_RECORD = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'workflows', 'main-running.json'), 'utf8'),
) as StoredWorkflow

const job = (cpu = 0.5) => ({
  image: 'dms-test:1',
  command: ['true'],
  resources: { cpu, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 100,
})
const MiB = 1024 * 1024
const file = (path: string, c: string) => ({ path, sha256: c.repeat(64), size: 3 })
/** What a completed job's record holds for hand-offs: its manifest, archive and provider. */
const result = (files: Array<{ path: string; sha256: string; size: number }>) =>
  ({
    result: { outputs: files, archive: { sha256: 'f'.repeat(64), size: 1024 } },
    winner: { provider: '12D3KooWup' },
    providerAddrs: { '12D3KooWup': ['/ip4/127.0.0.1/tcp/1'] },
  }) as never

/** up -> pod p {a, b (network)} -> down (reads a's x.txt, and all of b's outputs under bb/). */
const doc = {
  tasks: [
    { name: 'up', job: job() },
    { name: 'a', job: job(0.25), pod: 'p', runAfter: ['up'] },
    { name: 'b', job: { ...job(1), network: true, env: { K: 'v' } }, pod: 'p' },
    {
      name: 'down',
      job: job(),
      from: [
        { fromTask: 'a', path: 'x.txt' },
        { fromTask: 'b', as: 'bb' },
      ],
    },
  ],
}

describe('workflow runner: pods (real level, faked jobs port)', () => {
  let dir: string
  let db: Db
  let fake: FakeJobs
  let runner: WorkflowRunner
  let blobs: BlobStore
  const make = () =>
    new WorkflowRunner({ db, clock: { now: () => Date.now() }, log: silentLogger, jobs: fake, blobs })
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
  const posted = (jobId: string) => (wf: StoredWorkflow) => wf !== undefined && fake.jobs.has(jobId)
  /** Runs `up` to completion and waits for the pod's one job. */
  const toPod = async () => {
    const { record } = await runner.post(doc)
    const id = record.id
    await when(id, posted(jobIdOf(id, 'up')))
    fake.set(jobIdOf(id, 'up'), 'completed')
    await when(id, (w) => posted(podJobIdOf(id, 'p'))(w) && w.record.tasks.b.state === 'started')
    return id
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-wf-pods-'))
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

  it("posts ONE job for the pod once its tasks' upstreams completed: members, summed resources and price", async () => {
    const { record } = await runner.post(doc)
    const id = record.id
    assert.equal(record.escrowPlan, 400, 'the pod counts once, at its tasks added up')
    await when(id, posted(jobIdOf(id, 'up')))
    assert.deepEqual([...fake.jobs.keys()], [jobIdOf(id, 'up')], 'b has no upstream, but its pod has')
    fake.set(jobIdOf(id, 'up'), 'completed')
    const wf = await when(
      id,
      (w) => w.record.tasks.a.state === 'started' && fake.jobs.has(podJobIdOf(id, 'p')),
    )
    assert.equal(wf.record.tasks.a.jobId, podJobIdOf(id, 'p'))
    assert.equal(wf.record.tasks.b.jobId, podJobIdOf(id, 'p'))
    assert.deepEqual([...fake.jobs.keys()].sort(), [jobIdOf(id, 'up'), podJobIdOf(id, 'p')].sort())
    const spec = fake.jobs.get(podJobIdOf(id, 'p'))!.spec
    assert.deepEqual(spec.members, [
      { name: 'a', image: 'dms-test:1', command: ['true'], env: {}, cpu: 0.25, memoryBytes: 64 * MiB },
      {
        name: 'b',
        image: 'dms-test:1',
        command: ['true'],
        env: { K: 'v' },
        network: true,
        cpu: 1,
        memoryBytes: 64 * MiB,
      },
    ])
    assert.deepEqual(spec.resources, { cpu: 1.25, memoryBytes: 128 * MiB, diskBytes: 0, gpus: 0 })
    assert.equal(spec.maxPrice, 200)
    assert.equal(spec.maxDurationSeconds, 60)
    assert.equal(spec.name, 'p')
    assert.equal(spec.network, undefined, 'network is per member')
    assert.equal(spec.outputsStay, true, "down reads a's and b's outputs from the provider")
  })

  it("each task's row follows the pod's job; a dependant of a task reads its subtree of the pod's archive", async () => {
    const id = await toPod()
    const pod = podJobIdOf(id, 'p')
    fake.set(pod, 'running')
    const running = await when(id, (w) => w.record.tasks.a.jobState === 'running')
    assert.equal(running.record.tasks.b.jobState, 'running')
    fake.set(pod, 'completed', undefined, result([file('a/x.txt', 'a'), file('b/x.txt', 'b')]))
    await when(id, (w) => w.record.tasks.down.state === 'started' && fake.jobs.has(jobIdOf(id, 'down')))
    const down = fake.jobs.get(jobIdOf(id, 'down'))!.spec
    assert.deepEqual(
      down.inputs?.map((f) => [f.path, f.sha256, f.source?.entry]),
      [
        ['x.txt', 'a'.repeat(64), 'a/x.txt'],
        ['bb/x.txt', 'b'.repeat(64), 'b/x.txt'],
      ],
      "a's x.txt, not b's; b's whole subtree, without its prefix",
    )
    fake.set(jobIdOf(id, 'down'), 'completed')
    const done = await when(id, (w) => w.state === 'completed')
    assert.deepEqual(
      Object.values(done.record.tasks).map((r) => r.state),
      ['completed', 'completed', 'completed', 'completed'],
    )
  })

  it("a task's outputs on demand are its subtree of the pod's archive", async () => {
    const id = await toPod()
    const pod = podJobIdOf(id, 'p')
    const files = [file('a/x.txt', 'a'), file('b/y.txt', 'b'), file('ab/z', 'c')]
    fake.outputFiles.set(pod, files)
    // While the workflow runs: handed-on outputs are released once it ends (OUTPUTS_RELEASED).
    fake.set(pod, 'completed', undefined, result(files))
    await when(id, (w) => w.record.tasks.down.state === 'started' && fake.jobs.has(jobIdOf(id, 'down')))
    assert.deepEqual(await runner.outputs(id, 'a'), {
      task: 'a',
      pod: 'p',
      jobId: pod,
      files: [file('a/x.txt', 'a')],
      archive: null,
    })
    assert.deepEqual((await runner.outputs(id, 'b')).files, [file('b/y.txt', 'b')])
  })

  it('a failed pod fails every task of it with its reason, and their dependants UPSTREAM_FAILED', async () => {
    const id = await toPod()
    const noBids = { code: 'NO_BIDS', message: 'no bids: 12D3KooWx declined: needs 1.25 cpu, has 1' }
    fake.set(podJobIdOf(id, 'p'), 'failed', noBids)
    const done = await when(id, (w) => w.state === 'failed')
    assert.deepEqual(done.record.tasks.a.error, noBids)
    assert.deepEqual(done.record.tasks.b.error, noBids)
    assert.equal(done.record.tasks.down.error?.code, 'UPSTREAM_FAILED')
    assert.equal(fake.jobs.has(jobIdOf(id, 'down')), false)
  })

  it("a pod whose run failed: each task's error says how its own container ended", async () => {
    const id = await toPod()
    const members = [
      { name: 'a', status: 'failed', exitCode: 3, stdout: '', stderr: '', truncated: false },
      {
        name: 'b',
        status: 'cancelled',
        exitCode: 137,
        reason: 'stopped: a failed',
        stdout: '',
        stderr: '',
        truncated: false,
      },
    ]
    fake.set(podJobIdOf(id, 'p'), 'failed', { code: 'RUN_FAILED', message: 'run failed (exit code 3)' }, {
      result: { outputs: [], members },
    } as never)
    const done = await when(id, (w) => w.state === 'failed')
    assert.deepEqual(done.record.tasks.a.error, {
      code: 'RUN_FAILED',
      message: "a: failed, exit code 3; the pod's job: run failed (exit code 3)",
    })
    assert.deepEqual(done.record.tasks.b.error, {
      code: 'RUN_FAILED',
      message: "b: cancelled, exit code 137 (stopped: a failed); the pod's job: run failed (exit code 3)",
    })
  })

  it('an upstream of one task that fails fails the whole pod UPSTREAM_FAILED; its job is never posted', async () => {
    const { record } = await runner.post(doc)
    const id = record.id
    await when(id, posted(jobIdOf(id, 'up')))
    fake.set(jobIdOf(id, 'up'), 'failed', { code: 'RUN_FAILED', message: 'exit 1' })
    const done = await when(id, (w) => w.state === 'failed')
    for (const t of ['a', 'b', 'down']) assert.equal(done.record.tasks[t].error?.code, 'UPSTREAM_FAILED', t)
    assert.equal(fake.jobs.has(podJobIdOf(id, 'p')), false)
  })

  it("cancel cancels the pod's job once, and every task of it ends cancelled", async () => {
    const id = await toPod()
    await runner.cancel(id)
    const done = await when(id, (w) => w.state === 'cancelled')
    assert.deepEqual(fake.cancelled, [podJobIdOf(id, 'p')])
    assert.deepEqual(
      ['a', 'b', 'down'].map((t) => done.record.tasks[t].state),
      ['cancelled', 'cancelled', 'cancelled'],
    )
  })

  it("restored after a restart: the pod's job is found, not posted twice, and the workflow completes", async () => {
    const id = await toPod()
    runner.stop() // the process dies: no more changes reach it
    fake.set(podJobIdOf(id, 'p'), 'completed', undefined, result([file('a/x.txt', 'a')]))
    runner = make()
    assert.equal(await runner.start(), 1)
    await when(id, (w) => w.record.tasks.down.state === 'started' && fake.jobs.has(jobIdOf(id, 'down')))
    fake.set(jobIdOf(id, 'down'), 'completed')
    await when(id, (w) => w.state === 'completed')
    assert.equal(fake.postCount.get(podJobIdOf(id, 'p')), 1)
  })

  it("releases the pod's archive once when the workflow ended", async () => {
    const id = await toPod()
    fake.set(podJobIdOf(id, 'p'), 'completed', undefined, result([file('a/x.txt', 'a')]))
    await when(id, (w) => fake.jobs.has(jobIdOf(id, 'down')) && w.record.tasks.down.state === 'started')
    fake.set(jobIdOf(id, 'down'), 'completed')
    await when(id, (w) => w.released === true)
    assert.deepEqual(
      fake.released.sort(),
      [jobIdOf(id, 'up'), podJobIdOf(id, 'p'), jobIdOf(id, 'down')].sort(),
    )
  })

  it('a workflow stored by main (before pods) keeps loading: restored, it finds its job and completes', async () => {
    runner.stop()
    const id = MAIN_RECORD.record.id
    await runner.repo.put(id, MAIN_RECORD)
    // The job main posted for A, under the id it derived (the derivation is unchanged).
    assert.equal(MAIN_RECORD.record.tasks.A.jobId, jobIdOf(id, 'A'))
    await fake.post(MAIN_RECORD.record.workflow.tasks[0].job, jobIdOf(id, 'A'))
    runner = make()
    assert.equal(await runner.start(), 1)
    fake.set(jobIdOf(id, 'A'), 'completed', undefined, result([file('a.txt', 'a')]))
    await when(id, (w) => w.record.tasks.B.state === 'started' && fake.jobs.has(jobIdOf(id, 'B')))
    assert.equal(fake.jobs.get(jobIdOf(id, 'B'))!.spec.inputs?.[0].source?.entry, 'a.txt')
    fake.set(jobIdOf(id, 'B'), 'completed')
    await when(id, (w) => w.state === 'completed')
    assert.equal(fake.postCount.get(jobIdOf(id, 'A')), 1)
  })
})
