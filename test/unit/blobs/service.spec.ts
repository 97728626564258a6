import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BlobService, type Chunk, type ChunkRequest } from '../../../dms/blobs/service.js'
import { inputsProblem, stageInputs } from '../../../dms/blobs/staging.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { silentLogger } from '../../../dms/log.js'
import { openDb, type Db } from '../../../dms/store/db.js'

const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex')

/** Resolves once `ready` holds, checking at each turn of the event loop (no timers). */
async function waitUntil(ready: () => Promise<boolean>): Promise<void> {
  while (!(await ready())) await new Promise<void>((r) => setImmediate(r))
}

describe('BlobService (grants, chunked fetch of what is missing) and input staging', function () {
  let dir: string
  let dbs: Db[]
  let a: BlobService
  let b: BlobService

  async function service(name: string, chunkBytes?: number): Promise<BlobService> {
    const store = new BlobStore({ dir: join(dir, name, 'blobs') })
    await store.start()
    const db = await openDb(join(dir, name, 'db'))
    dbs.push(db)
    return new BlobService({ store, db, log: silentLogger, now: () => 1 }, { chunkBytes })
  }

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dms-blobsvc-'))
    dbs = []
    a = await service('a')
    b = await service('b', 4)
  })
  afterEach(async function () {
    for (const db of dbs) await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('serves a blob only to a peer it was granted to', async function () {
    const id = await a.store.put(Buffer.from('secret input'))
    const req = { sha256: id, offset: 0, length: 100 }
    await assert.rejects(a.serve('peer-b', req), { code: 'BLOB_NOT_GRANTED' })
    await a.grant('peer-b', id)
    assert.equal(Buffer.from((await a.serve('peer-b', req)).data).toString(), 'secret input')
    await assert.rejects(a.serve('peer-c', req), { code: 'BLOB_NOT_GRANTED' })
    await assert.rejects(a.serve('peer-b', { ...req, length: 2 * 1024 * 1024 }), RangeError)
    await a.revoke('peer-b', id)
    await assert.rejects(a.serve('peer-b', req), { code: 'BLOB_NOT_GRANTED' })
  })

  it('an output archive is deleted once every job it was published for is released and no other grant holds it', async function () {
    const bytes = 'an output archive'
    const archive = sha(bytes)
    const input = await a.store.put(Buffer.from('an input the node shares'))
    // The same bytes were two jobs' outputs for one requester, and one job's for another.
    for (const [peer, job] of [
      ['requester', 'job-1'],
      ['requester', 'job-2'],
      ['other', 'job-3'],
    ]) {
      const file = join(a.store.tmpDir, `${job}.tar`)
      await writeFile(file, bytes)
      await a.publishArchive(peer, { file, sha256: archive, size: bytes.length }, job)
    }
    await a.grant('provider', input)
    await assert.rejects(a.release('stranger', archive, 'job-1'), { code: 'BLOB_NOT_GRANTED' })
    await assert.rejects(a.release('other', archive, 'job-1'), { code: 'BLOB_NOT_GRANTED' })
    await assert.rejects(a.release('provider', input, 'job-1'), { code: 'BLOB_NOT_GRANTED' })
    assert.equal(await a.store.has(input), true, 'a grantee cannot delete what the node shared for itself')
    const req = { sha256: archive, offset: 0, length: 10 }
    assert.deepEqual(await a.release('requester', archive, 'job-1'), { removed: false })
    assert.ok(await a.serve('requester', req), 'job-2 still holds it')
    assert.deepEqual(await a.release('requester', archive, 'job-2'), { removed: false })
    await assert.rejects(a.serve('requester', req), { code: 'BLOB_NOT_GRANTED' })
    assert.equal(await a.store.has(archive), true, "another peer's grant still holds it")
    await assert.rejects(a.release('requester', archive, 'job-2'), { code: 'BLOB_NOT_GRANTED' })
    assert.deepEqual(await a.release('other', archive, 'job-3'), { removed: true })
    assert.equal(await a.store.has(archive), false)
  })

  it('a grant to look (the contract-db checking a rejection) never keeps an archive from its release', async function () {
    const bytes = 'outputs the contract-db checks'
    const archive = sha(bytes)
    const file = join(a.store.tmpDir, 'job-1.tar')
    await writeFile(file, bytes)
    await a.publishArchive('requester', { file, sha256: archive, size: bytes.length }, 'job-1')
    await a.grant('contract-db', archive, { lookOnly: true })
    assert.ok(await a.serve('contract-db', { sha256: archive, offset: 0, length: 10 }))
    assert.deepEqual(await a.release('requester', archive, 'job-1'), { removed: true })
    assert.equal(await a.store.has(archive), false)
    await assert.rejects(a.serve('contract-db', { sha256: archive, offset: 0, length: 10 }), {
      code: 'BLOB_NOT_GRANTED',
    })
  })

  it('a crash just before or just after the archive is taken leaks no disk: published again after the restart, it is deleted at its release', async function () {
    const bytes = 'an archive caught by a crash'
    const archive = sha(bytes)
    for (const crash of ['before', 'after'] as const) {
      const root = join(dir, `crash-${crash}`)
      const db = await openDb(join(root, 'db'))
      dbs.push(db)
      const store = new BlobStore({ dir: join(root, 'blobs') })
      await store.start()
      // The process dies inside the adoption, before the file is taken or just after.
      const dying = Object.create(store) as BlobStore
      dying.adopt = async (file, ref) => {
        if (crash === 'after') await store.adopt(file, ref)
        return new Promise<void>(() => undefined)
      }
      const before = new BlobService({ store: dying, db, log: silentLogger, now: () => 1 })
      const file = join(store.tmpDir, 'out.tar')
      await writeFile(file, bytes)
      void before.publishArchive('requester', { file, sha256: archive, size: bytes.length }, 'job-1')
      await waitUntil(async () => crash === 'before' || (await store.has(archive)))
      // Restarted: the run's archive is written again and published again, then released.
      const restarted = new BlobStore({ dir: join(root, 'blobs') })
      await restarted.start()
      const after = new BlobService({ store: restarted, db, log: silentLogger, now: () => 2 })
      const again = join(restarted.tmpDir, 'out.tar')
      await writeFile(again, bytes)
      await after.publishArchive('requester', { file: again, sha256: archive, size: bytes.length }, 'job-1')
      assert.deepEqual(await after.release('requester', archive, 'job-1'), { removed: true }, crash)
      assert.equal(await restarted.has(archive), false, crash)
    }
  })

  it('an archive that cannot be taken leaves no grant behind', async function () {
    const file = join(a.store.tmpDir, 'short.tar')
    await writeFile(file, 'short')
    const archive = sha('short but said to be longer')
    await assert.rejects(a.publishArchive('requester', { file, sha256: archive, size: 99 }, 'job-1'), {
      code: 'BLOB_CORRUPT',
    })
    await assert.rejects(a.release('requester', archive, 'job-1'), { code: 'BLOB_NOT_GRANTED' })
    await assert.rejects(a.serve('requester', { sha256: archive, offset: 0, length: 1 }), {
      code: 'BLOB_NOT_GRANTED',
    })
  })

  it('fetches only the blobs it lacks, in chunks, and verifies each', async function () {
    const one = await a.store.put(Buffer.from('first input file'))
    const two = await a.store.put(Buffer.from('second'))
    await b.store.put(Buffer.from('second')) // already cached on b
    for (const id of [one, two]) await a.grant('peer-b', id)
    const asked: ChunkRequest[] = []
    const getChunk = (r: ChunkRequest): Promise<Chunk> => {
      asked.push(r)
      return a.serve('peer-b', r)
    }
    const fetched = await b.fetchMissing(
      [
        { sha256: one, size: 16 },
        { sha256: two, size: 6 },
      ],
      getChunk,
    )
    assert.deepEqual(fetched, [one], 'the cached blob is not asked for')
    assert.deepEqual(
      asked.map((r) => [r.offset, r.length]),
      [
        [0, 4],
        [4, 4],
        [8, 4],
        [12, 4],
      ],
    )
    assert.equal(Buffer.from(await b.store.read(one)).toString(), 'first input file')
  })

  it('rejects a corrupted or short blob and stores nothing', async function () {
    const id = sha('the real content')
    const corrupt = (r: ChunkRequest): Promise<Chunk> =>
      Promise.resolve({
        size: 16,
        data: Buffer.from('the fake content').subarray(r.offset, r.offset + r.length),
      })
    await assert.rejects(b.fetchMissing([{ sha256: id, size: 16 }], corrupt), { code: 'BLOB_CORRUPT' })
    assert.equal(await b.store.has(id), false)
    const short = (r: ChunkRequest): Promise<Chunk> =>
      Promise.resolve({
        size: 16,
        data: Buffer.from('the real content').subarray(r.offset, Math.min(8, r.offset + r.length)),
      })
    await assert.rejects(b.fetchMissing([{ sha256: id, size: 16 }], short), {
      code: 'BAD_CHUNK',
      message: /chunk at 8 is 0 bytes, 4 asked for/,
    })
    assert.equal(await b.store.has(id), false)
  })

  it('refuses a trickle: a chunk shorter than asked for ends the fetch at once (issue: trickled archive)', async function () {
    const content = Buffer.from('the real content')
    const id = sha(content)
    let asked = 0
    const trickle = (r: ChunkRequest): Promise<Chunk> => {
      asked++
      return Promise.resolve({ size: 16, data: content.subarray(r.offset, r.offset + 1) })
    }
    await assert.rejects(b.fetchMissing([{ sha256: id, size: 16 }], trickle), {
      code: 'BAD_CHUNK',
      message: /chunk at 0 is 1 bytes, 4 asked for/,
    })
    assert.equal(asked, 1, 'no second chunk is asked for')
    assert.equal(await b.store.has(id), false)
    // A peer that announces another size is refused too, and a longer chunk as well.
    const otherSize = (r: ChunkRequest): Promise<Chunk> =>
      Promise.resolve({ size: 1 << 30, data: content.subarray(r.offset, r.offset + r.length) })
    await assert.rejects(b.fetchMissing([{ sha256: id, size: 16 }], otherSize), { code: 'BAD_CHUNK' })
    const long = (r: ChunkRequest): Promise<Chunk> =>
      Promise.resolve({ size: 16, data: content.subarray(r.offset, r.offset + 8) })
    await assert.rejects(b.fetchMissing([{ sha256: id, size: 16 }], long), { code: 'BAD_CHUNK' })
    assert.equal(await b.store.has(id), false)
  })

  it('stages inputs as read-only files and refuses unsafe layouts', async function () {
    const id = await a.store.put(Buffer.from('data\n'))
    const target = join(dir, 'staged')
    await stageInputs(a.store, [{ path: 'd/in.txt', sha256: id, size: 5 }], target)
    assert.equal(await readFile(join(target, 'd/in.txt'), 'utf8'), 'data\n')
    assert.equal((await stat(join(target, 'd/in.txt'))).mode & 0o777, 0o444)
    assert.match(inputsProblem([{ path: '../x', sha256: id, size: 5 }]) ?? '', /must be relative/)
    assert.match(
      inputsProblem([
        { path: 'a', sha256: id, size: 5 },
        { path: 'a', sha256: id, size: 5 },
      ]) ?? '',
      /given twice/,
    )
    assert.match(
      inputsProblem([
        { path: 'a', sha256: id, size: 5 },
        { path: 'a/b', sha256: id, size: 5 },
      ]) ?? '',
      /both a file and a folder/,
    )
  })
})
