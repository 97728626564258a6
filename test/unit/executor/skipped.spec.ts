import assert from 'node:assert/strict'
import { MAX_SKIPPED_DETAIL } from '../../../dms/contracts/model.js'
import { showName, SkipTally } from '../../../dms/executor/skipped.js'

describe('executor/skipped: what output collection left out', function () {
  it('shows any name safely: printable ASCII as is, every other byte escaped, long names cut', function () {
    assert.equal(showName(Buffer.from('ok.txt')), '"ok.txt"')
    assert.equal(showName(Buffer.from([0x62, 0xff, 0x0a, 0x22, 0x5c])), '"b\\xff\\x0a\\x22\\x5c"')
    assert.equal(showName(Buffer.from('é')), '"\\xc3\\xa9"')
    assert.equal(showName(Buffer.alloc(5000, 0x61)), `"${'a'.repeat(48)}…" (5000 bytes)`)
  })

  it('counts by reason with three examples each, and stays within the receipt bound', function () {
    const t = new SkipTally()
    assert.equal(t.result(), undefined)
    for (let i = 0; i < 5; i++) t.add('with a name that is not UTF-8', Buffer.from([0x61 + i, 0xff]))
    t.add('not a regular file or folder', Buffer.from('link'))
    assert.deepEqual(t.result(), {
      count: 6,
      detail:
        '5 entries with a name that is not UTF-8 ("a\\xff", "b\\xff", "c\\xff", …); ' +
        '1 entry not a regular file or folder ("link")',
    })
    const many = new SkipTally()
    for (let i = 0; i < 100; i++) many.add(`unreadable (E${i}${'X'.repeat(40)})`, Buffer.alloc(300, 0x7a))
    const r = many.result()!
    assert.equal(r.count, 100)
    assert.equal(r.detail.length, MAX_SKIPPED_DETAIL)
    assert.ok(r.detail.endsWith('…'))
  })
})
