/** Unfinished-frame byte budgets per connection and in total (dms/network/read-budget.ts). */
import assert from 'node:assert/strict'
import { ReadBudget } from '../../../dms/network/read-budget.js'

describe('ReadBudget', () => {
  it('sums streams per connection and over all connections', () => {
    const b = new ReadBudget({ perConnection: 100, total: 150 })
    assert.ok(b.set('c1', 's1', 60))
    assert.ok(b.set('c1', 's2', 40))
    assert.ok(b.set('c2', 's1', 50))
    assert.deepEqual([b.connectionBytes('c1'), b.connectionBytes('c2'), b.total], [100, 50, 150])
  })

  it('refuses growth over the connection or the total limit, and changes nothing then', () => {
    const b = new ReadBudget({ perConnection: 100, total: 150 })
    b.set('c1', 's1', 90)
    assert.equal(b.set('c1', 's2', 11), false, 'connection limit')
    b.set('c2', 's1', 60)
    assert.equal(b.set('c3', 's1', 1), false, 'total limit')
    assert.deepEqual([b.connectionBytes('c1'), b.connectionBytes('c3'), b.total], [90, 0, 150])
    // Shrinking is always allowed, and frees room.
    assert.ok(b.set('c1', 's1', 10))
    assert.ok(b.set('c3', 's1', 80))
  })

  it('release forgets a stream', () => {
    const b = new ReadBudget({ perConnection: 100, total: 100 })
    b.set('c1', 's1', 100)
    b.release('c1', 's1')
    assert.deepEqual([b.connectionBytes('c1'), b.total], [0, 0])
    assert.ok(b.set('c2', 's1', 100))
  })
})
