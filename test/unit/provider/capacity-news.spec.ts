/**
 * The provider's capacity news on a simulated clock: announced after the ledger frees something,
 * at start and when a peer joins the capacity topic, at most one per CAPACITY_NEWS_GAP_MS (a burst
 * makes one more announcement at the end of the gap, carrying what is free then), with its
 * credential; none while withdrawn or unapproved.
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import type { ApprovalCredential } from '../../../dms/contracts/model.js'
import { silentLogger } from '../../../dms/log.js'
import { CAPACITY_NEWS_GAP_MS, CapacityAnnouncer } from '../../../dms/provider/capacity-news.js'
import type { CapacityNews } from '../../../dms/protocol/messages.js'
import type { Offer, Resources } from '../../../dms/resources/types.js'

const cred = { peer: 'P' } as unknown as ApprovalCredential

function setup(state0: { approval?: ApprovalCredential; offer?: Offer } = {}) {
  const clock = new ManualClock(1_000_000)
  let freed: () => void = () => undefined
  let joined: (() => void) | undefined
  const state: { free: Resources; offer: Offer | undefined; approval: ApprovalCredential | undefined } = {
    free: { cpu: 0, memoryBytes: 0, diskBytes: 0, gpus: 0 },
    offer: 'offer' in state0 ? state0.offer : ({ resources: {} } as Offer),
    approval: 'approval' in state0 ? state0.approval : cred,
  }
  const sent: CapacityNews[] = []
  const a = new CapacityAnnouncer({
    clock,
    log: silentLogger,
    ledger: {
      onFreed: (fn) => {
        freed = fn
        return () => (freed = () => undefined)
      },
      free: () => state.free,
      getOffer: () => state.offer,
    },
    approval: { current: () => state.approval },
    peerId: () => '12D3KooWProvider',
    publish: (n) => {
      sent.push(n)
      return Promise.resolve()
    },
    announceOn: [
      (fn) => {
        joined = fn
        return () => (joined = undefined)
      },
    ],
  })
  a.start()
  return {
    clock,
    state,
    sent,
    a,
    free: () => freed(),
    join: () => joined?.(),
    joins: () => joined !== undefined,
  }
}

describe('provider/capacity-news', () => {
  it('announces at once, then coalesces a burst into one announcement at the end of the gap', async () => {
    const f = setup({ approval: undefined }) // nothing said at start without a credential
    f.state.approval = cred
    f.state.free = { ...f.state.free, cpu: 0.5 }
    f.free()
    await Promise.resolve()
    assert.deepEqual(
      f.sent.map((n) => [n.free.cpu, n.at]),
      [[0.5, 1_000_000]],
    )
    assert.equal(f.sent[0].provider, '12D3KooWProvider')
    assert.equal(f.sent[0].approval, cred)
    for (const cpu of [1, 1.5, 2]) {
      f.state.free = { ...f.state.free, cpu }
      f.clock.advance(100)
      f.free()
    }
    assert.equal(f.sent.length, 1, 'nothing more within the gap')
    await f.clock.advanceAsync(CAPACITY_NEWS_GAP_MS)
    assert.deepEqual(
      f.sent.map((n) => [n.free.cpu, n.at]),
      [
        [0.5, 1_000_000],
        [2, 1_000_000 + CAPACITY_NEWS_GAP_MS],
      ],
      'one more, with what is free at its time',
    )
    assert.equal(f.a.sent, 2)
  })

  it('says nothing while the offer is withdrawn or this provider has no credential; stop unsubscribes', async () => {
    const f = setup({ offer: { resources: {}, withdrawnAt: 1 } as Offer })
    f.free()
    f.state.offer = { resources: {} } as Offer
    f.state.approval = undefined
    f.clock.advance(CAPACITY_NEWS_GAP_MS)
    f.free()
    await Promise.resolve()
    assert.equal(f.sent.length, 0)
    f.state.approval = cred
    f.a.stop()
    f.clock.advance(CAPACITY_NEWS_GAP_MS)
    f.free()
    assert.equal(f.sent.length, 0)
    assert.equal(f.clock.pending, 0, 'no timer left')
    assert.equal(f.joins(), false, 'the capacity topic is no longer watched')
  })

  it('says what is free at start, and again (within the gap) when a requester joins the capacity topic', async () => {
    const f = setup()
    await Promise.resolve()
    assert.deepEqual(
      f.sent.map((n) => [n.free.cpu, n.at]),
      [[0, 1_000_000]],
      'at start',
    )
    f.state.free = { ...f.state.free, cpu: 3 }
    f.clock.advance(10)
    f.join()
    f.join()
    assert.equal(f.sent.length, 1, 'inside the gap: later')
    await f.clock.advanceAsync(CAPACITY_NEWS_GAP_MS)
    assert.deepEqual(
      f.sent.map((n) => [n.free.cpu, n.at]),
      [
        [0, 1_000_000],
        [3, 1_000_000 + CAPACITY_NEWS_GAP_MS],
      ],
      'one announcement for both joins',
    )
  })
})
