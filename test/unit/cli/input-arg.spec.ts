/** `job run --input file[:path]` (issue 20): where the file appears under /inputs. */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseInputArg } from '../../../dms/cli/job-run.js'

describe('job run --input file[:path] (issue 20)', () => {
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-input-arg-'))
    await writeFile(join(dir, 'odd:name.txt'), 'x')
  })
  after(() => rm(dir, { recursive: true, force: true }))

  it('stages the file under its own name by default, or at the path given (with or without /inputs/)', () => {
    assert.deepEqual(parseInputArg('data/a.csv'), { file: 'data/a.csv', path: 'a.csv' })
    assert.deepEqual(parseInputArg('a.csv:in/b.csv'), { file: 'a.csv', path: 'in/b.csv' })
    assert.deepEqual(parseInputArg('a.csv:/inputs/in/b.csv'), { file: 'a.csv', path: 'in/b.csv' })
  })

  it('takes an existing file whose name holds a colon as that file', () => {
    const f = join(dir, 'odd:name.txt')
    assert.deepEqual(parseInputArg(f), { file: f, path: 'odd:name.txt' })
  })

  it('refuses a path outside /inputs, with .. or not normal, naming the flag', () => {
    for (const bad of [
      'a.csv:/etc/passwd',
      'a.csv:../x',
      'a.csv:in/../../x',
      'a.csv:',
      'a.csv:in//x',
      'a.csv:/inputs/',
    ])
      assert.throws(
        () => parseInputArg(bad),
        /^CliError: --input .*: the path must be a plain relative path under \/inputs/,
        bad,
      )
  })
})
