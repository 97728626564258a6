import assert from 'node:assert/strict'
import { closest, didYouMean, typoDistance } from '../../../dms/cli/did-you-mean.js'

describe('did you mean (issue 35)', () => {
  it('counts a swap of two neighbours as one edit', () => {
    assert.equal(typoDistance('lsit', 'list'), 1)
    assert.equal(typoDistance('jbo', 'job'), 1)
    assert.equal(typoDistance('quue', 'queue'), 1)
    assert.equal(typoDistance('', 'abc'), 3)
  })

  it('suggests the closest known word only when it is close', () => {
    assert.equal(closest('lsit', ['list', 'logs', 'status']), 'list')
    assert.equal(closest('STATSU', ['list', 'logs', 'status']), 'status')
    assert.equal(closest('zzzz', ['list', 'logs']), undefined)
    assert.equal(didYouMean('jsno', ['table', 'wide', 'json', 'yaml']), '; did you mean json?')
    assert.equal(didYouMean('xml', ['table', 'wide', 'json', 'yaml']), '')
  })

  it('does not compare hostile lengths', () => {
    assert.equal(closest('l'.repeat(100_000), ['list']), undefined)
  })
})
