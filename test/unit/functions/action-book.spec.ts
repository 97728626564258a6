import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import type { ActionJobs, ActionJobView } from '../../../dms/functions/action-book.js'
import { Functions } from '../../../dms/functions/functions.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { worker } from './descriptors.js'

const sha = (b: string) => createHash('sha256').update(b).digest('hex')
const RUN = '#!/bin/sh\n'
const INPUT = 'input\n'

/**
 * The requester's jobs as the action book sees them: each post is recorded, and the test sets
 * what each job has become (the market is exercised by test/e2e/functions.spec.ts).
 */
class Jobs implements ActionJobs {
  readonly posted: Array<{ id: string; body: Record<string, unknown> }> = []
  readonly views = new Map<string, ActionJobView>()
  post(body: unknown) {
    const id = `job-${this.posted.length + 1}`
    this.posted.push({ id, body: body as Record<string, unknown> })
    this.views.set(id, { state: 'bidding', record: { id, history: [{ state: 'bidding', at: 5_001 }] } })
    return Promise.resolve({ state: 'bidding', record: { id } })
  }
  get(id: string) {
    return Promise.resolve(this.views.get(id))
  }
  /** Job `id` completed; `verified`: its receipt and outputs checked and its contract settled. */
  complete(id: string, verified = true) {
    this.views.set(id, {
      state: 'completed',
      record: {
        id,
        result: { outputs: [{ path: 'out', sha256: sha('x'), size: 1 }] } as never,
        verification: { outputsHashOk: verified, receiptSignatureOk: true },
        settlement: {} as never,
      },
    })
  }
  fail(id: string) {
    this.views.set(id, {
      state: 'failed',
      record: {
        id,
        error: { code: 'RUN_FAILED', message: 'exit 1' },
        history: [
          { state: 'bidding', at: 5_001 },
          { state: 'failed', at: 5_002 },
        ],
      },
    })
  }
}

describe('the action book: actions as jobs, and the result cache (real level, real blob store)', function () {
  let dir: string
  let db: Db
  let jobs: Jobs
  let f: Functions
  const action = {
    function: 'upper',
    version: '1.0',
    buildSystemVersion: 'bsv-1',
    inputs: [{ sha256: sha(INPUT), size: INPUT.length }],
  }
  const batch = (extra: Record<string, unknown> = {}) => ({ actions: [action], maxPrice: 500, ...extra })

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dms-actions-'))
    db = await openDb(join(dir, 'db'))
    const blobs = new BlobStore({ dir: join(dir, 'blobs') })
    await blobs.start()
    await blobs.put(Buffer.from(RUN))
    await blobs.put(Buffer.from(INPUT))
    jobs = new Jobs()
    f = new Functions({ db, clock: new ManualClock(5_000), blobs, jobs })
    await f.start()
    await f.workers.register(
      worker({ executables: [{ path: 'run.sh', sha256: sha(RUN), size: RUN.length }], files: [], dirs: [] }),
    )
  })
  afterEach(async function () {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('posts an action as a runtime job in file mode: worker files, build file, Inputs by hash', async function () {
    const [view] = await f.actions.post(batch({ queue: 'q1' }))
    assert.equal(jobs.posted.length, 1)
    const spec = jobs.posted[0].body as {
      runtime: string
      command: string[]
      inputs: Array<{ path: string; sha256?: string; content?: string }>
      maxPrice: number
      queue: string
      env: Record<string, string>
    }
    assert.equal(spec.runtime, '/bin/sh')
    assert.equal(spec.command[0], '/bin/sh')
    assert.match(spec.command[2], /exec '\/tmp\/worker\/run\.sh' build\.json \/outputs$/)
    assert.deepEqual(
      spec.inputs.map((i) => i.path),
      ['worker/run.sh', 'action/build.json', `action/Inputs/${sha(INPUT)}`],
    )
    assert.equal(sha(spec.inputs[1].content ?? ''), view.id, 'the build file hashes to the action id')
    assert.deepEqual([spec.maxPrice, spec.queue, spec.env.DMS_ACTION_ID], [500, 'q1', view.id])
    assert.deepEqual([view.state, view.jobId, view.jobs], ['running', 'job-1', ['job-1']])
  })

  it('answers a verified result from the cache; runs again after a failure, an unverified result, or with cache: false', async function () {
    const [first] = await f.actions.post(batch())
    assert.equal((await f.actions.post(batch()))[0].jobId, 'job-1', 'a live job is joined')
    jobs.fail('job-1')
    const failed = await f.actions.get(first.id)
    assert.equal(failed.state, 'failed')
    assert.deepEqual(failed.history, [
      { state: 'posted', at: 5_000 },
      { jobId: 'job-1', state: 'bidding', at: 5_001 },
      { jobId: 'job-1', state: 'failed', at: 5_002 },
    ])
    const [second] = await f.actions.post(batch())
    assert.deepEqual(second.jobs, ['job-1', 'job-2'], 'a failed action runs again')
    jobs.complete('job-2', false)
    assert.equal((await f.actions.get(first.id)).state, 'failed', 'outputs that did not check are no result')
    const [third] = await f.actions.post(batch())
    assert.equal(third.jobId, 'job-3', 'nor a cache entry')
    jobs.complete('job-3')
    const hit = (await f.actions.post(batch()))[0]
    assert.deepEqual(
      [hit.state, hit.cached, hit.jobId, hit.outputs],
      ['completed', true, 'job-3', [{ path: 'out', sha256: sha('x'), size: 1 }]],
    )
    assert.equal(jobs.posted.length, 3, 'the hit posted nothing')
    const [forced] = await f.actions.post(batch({ cache: false }))
    assert.equal(forced.jobId, 'job-4', 'cache: false runs it again')
    assert.deepEqual(f.actions.counts, { hits: 1, misses: 4, joined: 1 })
  })

  it('refuses a batch before posting any job: unknown function, missing blob, wrong size, bad id', async function () {
    const missing = { ...action, inputs: [{ sha256: sha('absent'), size: 6 }] }
    const wrongSize = { ...action, inputs: [{ sha256: sha(INPUT), size: 99 }] }
    const other = { ...action, version: '2.0' }
    const cases: Array<[unknown[], string, string]> = [
      [[action, other], 'NO_WORKER', 'actions.1'],
      [[action, missing], 'INVALID_ACTION', 'actions.1.inputs.0'],
      [[wrongSize], 'INVALID_ACTION', 'actions.0.inputs.0.size'],
      [[{ ...action, inputs: [{ sha256: 'x', size: 1 }] }], 'INVALID_ACTION', 'actions.0.inputs.0.sha256'],
      [[{ ...action, extra: true }], 'INVALID_ACTION', 'actions.0.extra'],
      [
        [
          {
            ...action,
            attachments: [
              { name: 'a', sha256: sha(INPUT), size: 6 },
              { name: 'a', sha256: sha(INPUT), size: 6 },
            ],
          },
        ],
        'INVALID_ACTION',
        'actions.0.attachments.1.name',
      ],
    ]
    for (const [actions, code, field] of cases)
      await assert.rejects(f.actions.post({ actions, maxPrice: 1 }), (e: { code: string; field: string }) => {
        assert.deepEqual([e.code, e.field], [code, field])
        return true
      })
    await assert.rejects(f.actions.post({ actions: [], maxPrice: 1 }), { code: 'INVALID_ACTION' })
    // A job the job spec would refuse (here: over 1000 inputs with the worker's files) is refused
    // with the batch, before its first action is posted.
    await f.workers.register(
      worker({
        executables: [{ path: 'run.sh', sha256: sha(RUN), size: RUN.length }],
        files: Array.from({ length: 999 }, (_, i) => ({
          path: `f/${i}`,
          sha256: sha(INPUT),
          size: INPUT.length,
        })),
        dirs: [],
        functions: [{ name: 'many', version: '1' }],
      }),
    )
    await assert.rejects(
      f.actions.post({ actions: [action, { ...action, function: 'many', version: '1' }], maxPrice: 1 }),
      (e: { code: string; field: string; message: string }) => {
        assert.deepEqual([e.code, e.field], ['INVALID_ACTION', 'actions.1'])
        assert.match(e.message, /its job would be refused: inputs/)
        return true
      },
    )
    assert.equal(jobs.posted.length, 0)
    await assert.rejects(f.actions.get('../../etc'), { code: 'ACTION_NOT_FOUND' })
  })

  it('keeps its actions across a restart', async function () {
    const [view] = await f.actions.post(batch())
    jobs.complete('job-1')
    const again = new Functions({
      db,
      clock: new ManualClock(9_000),
      blobs: { size: () => Promise.resolve(6) },
      jobs,
    })
    await again.start()
    assert.equal((await again.actions.get(view.id)).state, 'completed')
  })
})
