import assert from 'node:assert/strict'
import { MAX_HELD, memberLines, type Stream } from '../../../dms/cli/member-lines.js'

function recorder() {
  const written: Array<[Stream, string]> = []
  const lines = memberLines((stream, text) => void written.push([stream, text]))
  return {
    lines,
    written,
    text: (s: Stream) =>
      written
        .filter(([w]) => w === s)
        .map(([, t]) => t)
        .join(''),
  }
}

describe('a pod’s followed output, labelled by member', function () {
  it('labels each whole line with its member, holding a partial line until its newline', function () {
    const { lines, written, text } = recorder()
    lines.piece('stdout', 'one\ntw', 'a')
    assert.deepEqual(written, [['stdout', 'a | one\n']], 'the partial "tw" is held')
    lines.piece('stdout', 'hello\n', 'b')
    lines.piece('stdout', 'o\nthree\n', 'a')
    assert.equal(text('stdout'), 'a | one\nb | hello\na | two\na | three\n')
  })

  it('keeps each member’s streams apart, and writes what is held at the end', function () {
    const { lines, text } = recorder()
    lines.piece('stdout', 'out-a', 'a')
    lines.piece('stderr', 'err-a', 'a')
    lines.piece('stdout', 'out-b', 'b')
    assert.equal(text('stdout') + text('stderr'), '')
    lines.end()
    assert.equal(text('stdout'), 'a | out-a\nb | out-b\n')
    assert.equal(text('stderr'), 'a | err-a\n')
    lines.end()
    assert.equal(text('stdout'), 'a | out-a\nb | out-b\n', 'nothing is written twice')
  })

  it('passes a piece without a member through as it came (a job that is no pod)', function () {
    const { lines, written } = recorder()
    lines.piece('stdout', 'no newline')
    lines.piece('stderr', 'x\ny')
    lines.end()
    assert.deepEqual(written, [
      ['stdout', 'no newline'],
      ['stderr', 'x\ny'],
    ])
  })

  it('holds no more than its bound of a line that never ends', function () {
    const { lines, text } = recorder()
    const chunk = 'x'.repeat(MAX_HELD / 4)
    for (let i = 0; i < 4; i++) lines.piece('stdout', chunk, 'a')
    assert.equal(text('stdout'), '', 'up to the bound it is held')
    lines.piece('stdout', 'y', 'a')
    assert.equal(text('stdout'), `a | ${chunk.repeat(4)}y\n`)
    lines.piece('stdout', `z\n${'w'.repeat(MAX_HELD + 1)}`, 'a')
    assert.equal(text('stdout'), `a | ${chunk.repeat(4)}y\na | z\na | ${'w'.repeat(MAX_HELD + 1)}\n`)
  })

  it('shows a member name’s control characters as escapes', function () {
    const { lines, text } = recorder()
    lines.piece('stdout', 'hi\n', 'evil\u001b[2J')
    assert.ok(!text('stdout').includes('\u001b'), 'no raw escape')
    assert.match(text('stdout'), /hi\n$/)
  })
})
