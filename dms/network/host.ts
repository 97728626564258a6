import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { bootstrap } from '@libp2p/bootstrap'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { gossipsub, type GossipSub } from '@libp2p/gossipsub'
import { identify } from '@libp2p/identify'
import { ping } from '@libp2p/ping'
import { tcp } from '@libp2p/tcp'
import { createLibp2p, type Libp2p } from 'libp2p'
import type { KeyPair } from '../../actors/identity.js'

export type Host = Libp2p<{
  pubsub: GossipSub
  identify: ReturnType<ReturnType<typeof identify>>
  ping: unknown
}>

export interface HostInit {
  /** Multiaddrs to listen on. @default ['/ip4/127.0.0.1/tcp/0'] */
  listen?: string[]
  /** Multiaddrs (with /p2p/<id>) to dial at start. @default [] */
  bootstrap?: string[]
  /**
   * Settings for many nodes on one host (tests, devnet): no per-host inbound dial rate limit and no
   * gossipsub IP-colocation penalty. Keep false on a real network, where both protect you.
   * @default false
   */
  oneHost?: boolean
}

/** Builds (does not start) a libp2p host whose peer id derives from the node's key. */
export async function createHost(key: KeyPair, init: HostInit = {}): Promise<Host> {
  const privateKey = privateKeyFromRaw(key.libp2pRaw())
  const oneHost = init.oneHost ?? false
  const boot = init.bootstrap ?? []
  const node = await createLibp2p({
    privateKey,
    start: false,
    addresses: { listen: init.listen ?? ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    peerDiscovery: boot.length > 0 ? [bootstrap({ list: boot, timeout: 0 })] : [],
    connectionManager: oneHost ? { inboundConnectionThreshold: Infinity } : {},
    services: {
      identify: identify(),
      ping: ping(),
      pubsub: gossipsub({
        emitSelf: false,
        allowPublishToZeroTopicPeers: true,
        ...(oneHost ? { scoreParams: { IPColocationFactorWeight: 0 } } : {}),
      }),
    },
  })
  return node
}
