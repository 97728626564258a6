import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readTar, writeTar } from '../../../dms/blobs/tar.js'

const file = (path: string, text: string) => ({ path, content: Buffer.from(text) })
const longPath = `${'d'.repeat(80)}/${'f'.repeat(60)}.txt`

describe('tar (output archives)', function () {
  it('is deterministic: the same files in any order give the same bytes', function () {
    const a = writeTar([file('b.txt', 'B'), file('a/x.txt', 'AX')])
    const b = writeTar([file('a/x.txt', 'AX'), file('b.txt', 'B')])
    assert.deepEqual(a, b)
    assert.equal(a.length % 512, 0)
  })

  it('round-trips files, empty files and long paths (PAX)', function () {
    const files = [file('empty', ''), file(longPath, 'deep'), file('z/one', 'x'.repeat(1000))]
    const back = readTar(writeTar(files)).map((f) => [f.path, Buffer.from(f.content).toString()])
    assert.deepEqual(back, [
      ['d'.repeat(80) + '/' + 'f'.repeat(60) + '.txt', 'deep'],
      ['empty', ''],
      ['z/one', 'x'.repeat(1000)],
    ])
  })

  it('is a real tar: GNU tar lists and extracts it', function () {
    const dir = mkdtempSync(join(tmpdir(), 'dms-tar-'))
    try {
      writeFileSync(join(dir, 'out.tar'), writeTar([file('r/one.txt', 'one\n'), file(longPath, 'deep')]))
      const listed = execFileSync('tar', ['-tf', join(dir, 'out.tar')], { encoding: 'utf8' })
      assert.deepEqual(listed.trim().split('\n'), [longPath, 'r/one.txt'])
      execFileSync('tar', ['-xf', join(dir, 'out.tar'), '-C', dir])
      assert.equal(readFileSync(join(dir, 'r/one.txt'), 'utf8'), 'one\n')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses unsafe paths, duplicates, links, corruption and truncation', function () {
    assert.throws(() => writeTar([file('../up', 'x')]), { code: 'BAD_ARCHIVE' })
    assert.throws(() => writeTar([file('/abs', 'x')]), /unsafe path/)
    assert.throws(() => writeTar([file('a', '1'), file('a', '2')]), /duplicate path a/)

    const good = writeTar([file('a', 'hello')])
    const flipped = Buffer.from(good)
    flipped[0] = 0x62 // rename without fixing the checksum
    assert.throws(() => readTar(flipped), /header checksum mismatch/)
    assert.throws(() => readTar(good.subarray(0, 512)), /runs past the end|no end-of-archive/)

    const link = Buffer.from(good)
    link[156] = '2'.charCodeAt(0) // a symlink entry, checksum fixed up
    let sum = 0
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : (link[i] ?? 0)
    link.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii')
    assert.throws(() => readTar(link), /is not a file/)
  })
})
