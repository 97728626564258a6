import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findTarEntry, tarEntries } from '../../../dms/blobs/tar-reader.js'
import { TarFileWriter } from '../../../dms/workload/tar-writer.js'
import { tarOf, untar, type MemFile } from '../../helpers/tar.js'

const file = (path: string, text: string): MemFile => ({ path, content: Buffer.from(text) })
const longPath = `${'d'.repeat(80)}/${'f'.repeat(60)}.txt`
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex')

describe('tar (output archives, streamed to and from files)', function () {
  let dir: string
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'dms-tar-'))))
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('is deterministic: the same files give the same bytes, and the hashes are of what was written', async function () {
    const a = await tarOf(join(dir, 'a.tar'), [file('b.txt', 'B'), file('a/x.txt', 'AX')])
    const b = await tarOf(join(dir, 'b.tar'), [file('a/x.txt', 'AX'), file('b.txt', 'B')])
    const bytes = readFileSync(a.file)
    assert.deepEqual(bytes, readFileSync(b.file))
    assert.equal(bytes.length % 512, 0)
    assert.equal(a.size, bytes.length)
    assert.equal(a.sha256, sha256(bytes), 'the archive was hashed as it was written')
    assert.deepEqual(a.hashes, [sha256('AX'), sha256('B')], 'each file was hashed as it was copied')
  })

  it('round-trips files, empty files and long paths (PAX)', async function () {
    const files = [file('empty', ''), file(longPath, 'deep'), file('z/one', 'x'.repeat(1000))]
    const back = (await untar((await tarOf(join(dir, 'r.tar'), files)).file)).map((f) => [
      f.path,
      f.content.toString(),
    ])
    assert.deepEqual(back, [
      [longPath, 'deep'],
      ['empty', ''],
      ['z/one', 'x'.repeat(1000)],
    ])
    const found = await findTarEntry(join(dir, 'r.tar'), 'z/one')
    assert.equal(found?.size, 1000)
    assert.equal(await findTarEntry(join(dir, 'r.tar'), 'nope'), undefined)
  })

  it('is a real tar: GNU tar lists and extracts it', async function () {
    const { file: tar } = await tarOf(join(dir, 'out.tar'), [
      file('r/one.txt', 'one\n'),
      file(longPath, 'deep'),
    ])
    const listed = execFileSync('tar', ['-tf', tar], { encoding: 'utf8' })
    assert.deepEqual(listed.trim().split('\n'), [longPath, 'r/one.txt'])
    execFileSync('tar', ['-xf', tar, '-C', dir])
    assert.equal(readFileSync(join(dir, 'r/one.txt'), 'utf8'), 'one\n')
  })

  it('pads a source that is shorter than announced with zeros, and hashes what it wrote', async function () {
    writeFileSync(join(dir, 'short'), 'abc')
    const writer = await TarFileWriter.create(join(dir, 's.tar'))
    const source = await open(join(dir, 'short'), 'r')
    const hash = await writer.addFile('f', 5, source)
    await source.close()
    await writer.finish()
    const [f] = await untar(join(dir, 's.tar'))
    assert.deepEqual(f.content, Buffer.from('abc\0\0'))
    assert.equal(hash, sha256(f.content))
  })

  it('refuses unsafe paths, duplicates and disorder when writing', async function () {
    await assert.rejects(tarOf(join(dir, '1.tar'), [file('../up', 'x')]), { code: 'BAD_ARCHIVE' })
    await assert.rejects(tarOf(join(dir, '2.tar'), [file('/abs', 'x')]), /unsafe path/)
    await assert.rejects(tarOf(join(dir, '3.tar'), [file('a', '1'), file('a', '2')]), /duplicate path a/)
    writeFileSync(join(dir, 'src'), 'x')
    const writer = await TarFileWriter.create(join(dir, '4.tar'))
    const source = await open(join(dir, 'src'), 'r')
    await writer.addFile('b', 1, source)
    await assert.rejects(writer.addFile('a', 1, source), /path a is out of order/)
    await source.close()
    await writer.abort()
  })

  it('refuses links, corruption and truncation when reading', async function () {
    const { file: good } = await tarOf(join(dir, 'good.tar'), [file('a', 'hello')])
    const bytes = readFileSync(good)
    const read = async (b: Buffer) => {
      writeFileSync(join(dir, 'bad.tar'), b)
      const h = await open(join(dir, 'bad.tar'), 'r')
      try {
        for await (const _ of tarEntries(h));
      } finally {
        await h.close()
      }
    }
    const flipped = Buffer.from(bytes)
    flipped[0] = 0x62 // rename without fixing the checksum
    await assert.rejects(read(flipped), /header checksum mismatch/)
    await assert.rejects(read(bytes.subarray(0, 512)), /runs past the end|no end-of-archive/)
    await assert.rejects(read(bytes.subarray(0, 1024)), /no end-of-archive/)

    const link = Buffer.from(bytes)
    link[156] = '2'.charCodeAt(0) // a symlink entry, checksum fixed up
    let sum = 0
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : (link[i] ?? 0)
    link.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii')
    await assert.rejects(read(link), /is not a file/)
  })
})
