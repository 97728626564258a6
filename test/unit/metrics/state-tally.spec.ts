/**
 * Records by state, kept at events: each change moves one record; the start-up scan and the
 * changes that happen while it runs count every record once; final records leave memory.
 */
import assert from 'node:assert/strict'
import { Gauge, Registry } from 'prom-client'
import { StateTally } from '../../../dms/metrics/state-tally.js'

const setup = () => {
  const gauge = new Gauge({ name: 'g', help: 'g', labelNames: ['state'], registers: [new Registry()] })
  const tally = new StateTally(
    gauge,
    (s) => s === 'done',
    () => undefined,
  )
  const counts = async () =>
    Object.fromEntries((await gauge.get()).values.map((v) => [String(v.labels.state), v.value]))
  return { tally, counts }
}

describe('StateTally: records by state, at events', () => {
  it('moves a record from state to state; a final record stored again counts nothing', async () => {
    const { tally, counts } = setup()
    tally.observe('a', 'new')
    tally.observe('b', 'new')
    assert.deepEqual(tally.observe('a', 'busy'), { from: 'new', to: 'busy', memo: undefined })
    assert.equal(tally.observe('a', 'busy'), undefined, 'the same state again')
    tally.observe('a', 'done')
    assert.equal(tally.observe('a', 'done'), undefined, 'a final record stored again')
    tally.observe('b', undefined) // deleted
    assert.deepEqual(await counts(), { new: 0, busy: 0, done: 1 })
    assert.equal(tally.size, 0, 'final and deleted records leave memory')
  })

  it('counts each record once when changes arrive while the start-up scan reads the store', async () => {
    const { tally, counts } = setup()
    await tally.scan(async (seed) => {
      seed('x', 'done') // read final: counted by the scan
      tally.observe('x', 'done') // ...and stored again meanwhile: not twice
      tally.observe('y', 'busy') // changed before the scan reads it
      tally.observe('y', 'done') // ...and ended
      seed('y', 'new') // the scan's older copy: ignored
      tally.observe('z', 'done') // a record the scan has not read yet ends
      seed('z', 'done') // not twice
      seed('w', 'new')
      await Promise.resolve()
    })
    tally.observe('w', 'busy') // after the scan: moves
    tally.observe('x', 'done') // after the scan: a final record stored again
    assert.deepEqual(await counts(), { done: 3, busy: 1, new: 0 })
  })
})
