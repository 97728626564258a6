import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BlobStore } from '../../../dms/blobs/store.js'

const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex')

describe('BlobStore', function () {
  let dir: string
  let store: BlobStore

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dms-blobs-'))
    store = new BlobStore({ dir, maxBlobBytes: 1024 })
    await store.start()
  })
  afterEach(async () => rm(dir, { recursive: true, force: true }))

  it('stores content under its sha256 and reads it back, whole or in ranges', async function () {
    const id = await store.put(Buffer.from('hello blobs'))
    assert.equal(id, sha('hello blobs'))
    assert.equal(await store.has(id), true)
    assert.equal(await store.size(id), 11)
    assert.equal(Buffer.from(await store.read(id)).toString(), 'hello blobs')
    assert.equal(Buffer.from(await store.read(id, 6, 3)).toString(), 'blo')
    assert.equal((await store.read(id, 11, 5)).length, 0, 'a read past the end is empty')
    assert.equal(await store.put(Buffer.from('hello blobs')), id, 'putting it again is a no-op')
  })

  it('accepts a blob sent in pieces only when size and hash match', async function () {
    const data = Buffer.from('0123456789abcdef')
    const w = await store.writer(sha(data), data.length)
    await w.write(data.subarray(0, 7))
    await w.write(data.subarray(7))
    await w.commit()
    assert.equal(Buffer.from(await store.read(sha(data))).toString(), '0123456789abcdef')

    const corrupt = await store.writer(sha('expected'), 8)
    await corrupt.write(Buffer.from('tampered'))
    await assert.rejects(corrupt.commit(), { code: 'BLOB_CORRUPT', message: /content hashes to/ })
    assert.equal(await store.has(sha('expected')), false, 'a corrupt blob is never stored')

    const short = await store.writer(sha('abc'), 3)
    await short.write(Buffer.from('ab'))
    await assert.rejects(short.commit(), { code: 'BLOB_CORRUPT', message: /received 2 of 3 bytes/ })

    const long = await store.writer(sha('abc'), 3)
    await assert.rejects(long.write(Buffer.from('abcd')), { code: 'BLOB_CORRUPT' })
    assert.deepEqual(readdirSync(join(dir, 'tmp')), [], 'no temp file is left behind')
  })

  it('takes a file it did not read (an archive hashed as written) by moving it, after checking its size', async function () {
    const file = join(dir, 'tmp', 'archive.tar')
    await writeFile(file, 'archive bytes')
    await store.adopt(file, { sha256: sha('archive bytes'), size: 13 })
    assert.equal(existsSync(file), false, 'moved, not copied')
    assert.equal(Buffer.from(await store.read(sha('archive bytes'))).toString(), 'archive bytes')
    const { size, stream } = await store.stream(sha('archive bytes'))
    const chunks: Buffer[] = []
    for await (const c of stream) chunks.push(c as Buffer)
    assert.equal(size, 13)
    assert.equal(Buffer.concat(chunks).toString(), 'archive bytes')

    await writeFile(file, 'short')
    await assert.rejects(store.adopt(file, { sha256: sha('other'), size: 13 }), {
      code: 'BLOB_CORRUPT',
      message: /file holds 5 of 13 bytes/,
    })
    assert.equal(existsSync(file), false, 'a refused file is removed')
    assert.equal(await store.has(sha('other')), false)
  })

  it('refuses bad ids, missing blobs and blobs over the size limit', async function () {
    await assert.rejects(store.read('../etc/passwd'), { code: 'INVALID_BLOB_ID' })
    await assert.rejects(store.read('a'.repeat(64)), { code: 'BLOB_NOT_FOUND' })
    await assert.rejects(store.put(Buffer.alloc(1025)), { code: 'BLOB_TOO_LARGE' })
    await assert.rejects(store.writer('a'.repeat(64), 4096), { code: 'BLOB_TOO_LARGE' })
  })

  it('drops temp files a crash left behind when it starts', async function () {
    await writeFile(join(dir, 'tmp', 'half-written'), 'x')
    await new BlobStore({ dir }).start()
    assert.equal(existsSync(join(dir, 'tmp', 'half-written')), false)
  })
})
