/**
 * DMS's noise cipher suite (dms/network/noise-crypto.ts: node:crypto only, no WebAssembly) talks
 * to a libp2p node with noise's default suite, both ways: the handshake, identify and pings (small
 * frames, which the default sends through WebAssembly) over real TCP on 127.0.0.1.
 */
import assert from 'node:assert/strict'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify } from '@libp2p/identify'
import { ping } from '@libp2p/ping'
import { tcp } from '@libp2p/tcp'
import type { Multiaddr } from '@multiformats/multiaddr'
import { createLibp2p, type Libp2p } from 'libp2p'
import { KeyPair } from '../../../actors/identity.js'
import { createHost, type Host } from '../../../dms/network/host.js'

describe('noise with node:crypto only, against the default suite', function () {
  this.timeout(30_000)
  let host: Host
  let stock: Libp2p<{
    identify: ReturnType<ReturnType<typeof identify>>
    ping: ReturnType<ReturnType<typeof ping>>
  }>
  before(async () => {
    host = await createHost(KeyPair.generate(), { oneHost: true })
    await host.start()
    stock = await createLibp2p({
      addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
      transports: [tcp()],
      connectionEncrypters: [noise()],
      streamMuxers: [yamux()],
      services: { identify: identify(), ping: ping() },
    })
  })
  after(async () => {
    await stock?.stop()
    await host?.stop()
  })

  it('connects, identifies and pings from the default side', async () => {
    const rtt = await stock.services.ping.ping(host.getMultiaddrs()[0])
    assert.ok(rtt >= 0)
    const seen = await stock.peerStore.get(host.peerId)
    assert.ok(
      seen.protocols.some((p) => p.startsWith('/ipfs/ping/')),
      'identify came through',
    )
  })

  it('pings from DMS’s side', async () => {
    const pinger = host.services.ping as { ping(to: Multiaddr): Promise<number> }
    const rtt = await pinger.ping(stock.getMultiaddrs()[0])
    assert.ok(rtt >= 0)
  })
})
