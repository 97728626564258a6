import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { WorkerBook } from '../../../dms/functions/worker-book.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { worker } from './descriptors.js'

const sha = (b: string) => createHash('sha256').update(b).digest('hex')
const RUN = '#!/bin/sh\necho hi\n'
const WORDS = 'alpha beta\n'

/** A descriptor over real contents: run.sh and lib/words.txt, and words.txt again as a second path. */
const descriptor = (patch: Record<string, unknown> = {}) =>
  worker({
    executables: [{ path: 'run.sh', sha256: sha(RUN), size: RUN.length }],
    files: [
      { path: 'lib/words.txt', sha256: sha(WORDS), size: WORDS.length },
      { path: 'lib/again.txt', sha256: sha(WORDS), size: WORDS.length },
    ],
    ...patch,
  })

describe('the worker book (real level, real blob store)', function () {
  let dir: string
  let db: Db
  let blobs: BlobStore
  const clock = new ManualClock(1_000)

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dms-workers-'))
    db = await openDb(join(dir, 'db'))
    blobs = new BlobStore({ dir: join(dir, 'blobs') })
    await blobs.start()
  })
  afterEach(async function () {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('answers the blobs it lacks, each once, and registers once they are all here', async function () {
    const book = new WorkerBook({ db, clock, blobs })
    await book.start()
    const first = await book.register(descriptor())
    assert.equal(first.registered, false)
    assert.deepEqual(
      first.needs.map((n) => n.sha256).sort(),
      [sha(RUN), sha(WORDS)].sort(),
      'words.txt named twice is needed once',
    )
    assert.deepEqual(book.list(), [], 'nothing stored until every blob is here')
    await blobs.put(Buffer.from(RUN))
    assert.deepEqual(
      (await book.register(descriptor())).needs.map((n) => n.sha256),
      [sha(WORDS)],
    )
    await blobs.put(Buffer.from(WORDS))
    const done = await book.register(descriptor())
    assert.deepEqual(done, { id: first.id, registered: true, created: true, needs: [] })
    assert.deepEqual(
      await book.register(descriptor()),
      { ...done, created: false },
      'again: already registered',
    )
    assert.deepEqual(book.functions(), [
      { function: 'upper', version: '1.0', buildSystemVersion: 'bsv-1', workers: [first.id] },
    ])
    assert.equal(book.match('upper', '1.0', 'bsv-1')?.id, first.id)
    assert.equal(book.match('upper', '2.0', 'bsv-1'), undefined, 'another version: no worker')
    assert.equal(book.match('upper', '1.0', 'bsv-2'), undefined, 'another build system: no worker')
  })

  it('refuses a descriptor whose blob is here with another size', async function () {
    await blobs.put(Buffer.from(RUN))
    await blobs.put(Buffer.from(WORDS))
    const book = new WorkerBook({ db, clock, blobs })
    await assert.rejects(
      book.register(descriptor({ executables: [{ path: 'run.sh', sha256: sha(RUN), size: 3 }] })),
      (e: { code: string; field: string }) => e.code === 'INVALID_WORKER' && e.field === 'executables.0.size',
    )
  })

  it('keeps its workers across a restart, and holds at most maxWorkers', async function () {
    await blobs.put(Buffer.from(RUN))
    await blobs.put(Buffer.from(WORDS))
    const book = new WorkerBook({ db, clock, blobs }, { maxWorkers: 1 })
    await book.start()
    const { id } = await book.register(descriptor())
    await assert.rejects(book.register(descriptor({ cores: 2 })), { code: 'TOO_MANY_WORKERS' })
    const again = new WorkerBook({ db, clock, blobs })
    await again.start()
    assert.deepEqual(
      again.list().map((w) => [w.id, w.registeredAt]),
      [[id, 1_000]],
    )
    assert.equal(again.match('upper', '1.0', 'bsv-1')?.id, id)
  })
})
