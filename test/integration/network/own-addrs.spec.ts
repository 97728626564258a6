import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'

/**
 * The transport's own addresses (every envelope's sender handle carries them): asked of libp2p
 * once and reused, asked again a second later or as soon as libp2p says they changed.
 */
describe('Libp2pTransport.addrs: this node addresses, reused', () => {
  let peer: TestPeer
  let clock: ManualClock
  let asked: number
  beforeEach(async () => {
    clock = new ManualClock()
    peer = await startPeer([], { clock })
    const real = peer.host.getMultiaddrs.bind(peer.host)
    asked = 0
    peer.host.getMultiaddrs = () => (asked++, real())
  })
  afterEach(() => peer?.stop())

  it('asks libp2p once for many envelopes, and gives the addresses libp2p has', () => {
    const first = peer.transport.addrs()
    for (let i = 0; i < 100; i++) assert.equal(peer.transport.addrs(), first)
    assert.equal(asked, 1)
    assert.deepEqual(first, peer.host.getMultiaddrs().map(String))
    assert.ok(first.length > 0)
    // Shared by every handle: nobody may change it.
    assert.ok(Object.isFrozen(first))
  })

  it('asks again once a second has passed', () => {
    peer.transport.addrs()
    clock.advance(999)
    peer.transport.addrs()
    assert.equal(asked, 1)
    clock.advance(1)
    peer.transport.addrs()
    assert.equal(asked, 2)
  })

  it('asks again as soon as libp2p says its own addresses changed', () => {
    peer.transport.addrs()
    peer.host.dispatchEvent(new CustomEvent('self:peer:update'))
    peer.transport.addrs()
    assert.equal(asked, 2)
  })

  it('a stopped transport keeps nothing: a restart asks libp2p again', async () => {
    peer.transport.addrs()
    await peer.transport.stop()
    await peer.transport.start()
    peer.transport.addrs()
    assert.equal(asked, 2)
  })
})
