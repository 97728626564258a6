/**
 * An approved provider joining the bid topic wakes queued jobs (oldest first, at most
 * JOIN_MAX_WOKEN), at most once per JOIN_MIN_GAP_MS over all peers: a join inside the gap wakes
 * once at its end. A peer not known as an approved provider wakes nothing, however often it joins.
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import { silentLogger } from '../../../dms/log.js'
import { CapacityBoard } from '../../../dms/orchestrator/capacity-board.js'
import { JOIN_MIN_GAP_MS, ProviderJoins } from '../../../dms/orchestrator/provider-joins.js'
import { BID_REQUEST_TOPIC } from '../../../dms/protocol/handles.js'
import { Wakers } from '../../../dms/orchestrator/wakers.js'

const res = { cpu: 8, memoryBytes: 1, diskBytes: 0, gpus: 0 }

describe('orchestrator/provider-joins', () => {
  it('a join wakes the oldest queued jobs, whatever they need; joins inside the gap wake once after it', async () => {
    const clock = new ManualClock()
    const board = new CapacityBoard(new Wakers(clock))
    for (const p of ['P1', 'P2', 'P3', 'P4']) board.wakers.approved(p, clock.now() + 3_600_000)
    let join: ((peer: string) => void) | undefined
    const transport = {
      onTopicJoin: (topic: string, fn: (peer: string) => void) => {
        assert.equal(topic, BID_REQUEST_TOPIC)
        join = fn
        return () => (join = undefined)
      },
    }
    const joins = new ProviderJoins({ transport, clock, log: silentLogger, board }, JOIN_MIN_GAP_MS, 2)
    joins.start()
    const never = new AbortController().signal
    const woken: string[] = []
    for (const id of ['a', 'b', 'c', 'd'])
      void board.wait(id, res, never).then((by) => woken.push(`${id} ${by}`))

    join!('P1')
    await Promise.resolve()
    assert.deepEqual(
      woken,
      ['a joined P1', 'b joined P1'],
      'the two oldest, though no provider has 8 cores free',
    )
    join!('P2')
    join!('P3')
    await Promise.resolve()
    assert.equal(woken.length, 2, 'inside the gap: nothing yet')
    assert.equal(clock.pending, 1, 'one wake at the end of the gap')
    clock.advance(JOIN_MIN_GAP_MS)
    await Promise.resolve()
    assert.deepEqual(
      woken.slice(2),
      ['c joined P3', 'd joined P3'],
      'one wake for both joins, named by the last',
    )
    assert.equal(joins.joins, 3)
    assert.equal(joins.woken, 4)
    assert.equal(board.woken, 0, 'not counted as woken by capacity news')

    join!('P4')
    assert.equal(joins.woken, 4, 'no queued job: nothing to wake')
    joins.stop()
    assert.equal(join, undefined, 'stop leaves the topic watch')
  })
  it('a stranger flapping its subscription wakes nothing and arms no timer', async () => {
    const clock = new ManualClock()
    const board = new CapacityBoard(new Wakers(clock))
    let join: ((peer: string) => void) | undefined
    const transport = {
      onTopicJoin: (_topic: string, fn: (peer: string) => void) => ((join = fn), () => undefined),
    }
    const joins = new ProviderJoins({ transport, clock, log: silentLogger, board })
    joins.start()
    const woken: string[] = []
    void board.wait('a', res, new AbortController().signal).then((by) => woken.push(by))
    for (let i = 0; i < 50; i++) {
      join!('Stranger')
      clock.advance(JOIN_MIN_GAP_MS)
    }
    await Promise.resolve()
    assert.deepEqual(woken, [])
    assert.deepEqual([joins.joins, joins.strangers, joins.woken, clock.pending], [50, 50, 0, 0])
    joins.stop()
  })
})
