import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { bootstrap } from '@libp2p/bootstrap'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { gossipsub, type GossipSub, type GossipsubOpts } from '@libp2p/gossipsub'
import { identify } from '@libp2p/identify'
import type { mdns } from '@libp2p/mdns'
import { ping } from '@libp2p/ping'
import { tcp } from '@libp2p/tcp'
import type { KadDHT } from '@libp2p/kad-dht'
import { createLibp2p, type Libp2p } from 'libp2p'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { KeyPair } from '../../actors/identity.js'
import { noiseCrypto } from './noise-crypto.js'
import { dhtService, type DhtInit } from './discovery.js'
import { scoreOptions, type GossipScoreSettings } from './gossip-score.js'
import { natParts, type NatInit, type RelayInit } from './nat.js'
import { protector, readSwarmKey } from './pnet.js'
import type { CredentialCheck } from './relay/approvals.js'
import type { DmsRelayService } from './relay/service.js'
import { userAgent } from './peer-info.js'
import { halfWindowUpdates } from './yamux-window.js'

export type Host = Libp2p<{
  pubsub: GossipSub
  identify: ReturnType<ReturnType<typeof identify>>
  ping: unknown
  /** Present when `network.dht` is set. */
  dht?: KadDHT
  /** Present when `network.relay.serve` is set (dms/network/relay/). */
  relay?: DmsRelayService
}>

/** Connection limits (libp2p connection manager). Unset fields keep libp2p's defaults. */
export interface ConnectionLimits {
  /** @default 300 (libp2p) */
  maxConnections?: number
  /** Inbound dials per second accepted from one host. @default 5 (libp2p); Infinity with oneHost */
  inboundConnectionThreshold?: number
  /** Inbound connections still upgrading. @default 10 (libp2p) */
  maxIncomingPendingConnections?: number
  /** @default 100 (libp2p) */
  maxParallelDials?: number
}

/** Gossipsub settings a deployment may tune. Unset fields keep gossipsub's defaults. */
export interface GossipSettings {
  /** Mesh degree. @default 6 */
  D?: number
  /** @default 4 */
  Dlo?: number
  /** @default 12 */
  Dhi?: number
  /** @default 6 */
  Dlazy?: number
  /** @default 1000 */
  heartbeatIntervalMs?: number
  /** Publish to every subscribed peer, not just the mesh. @default true */
  floodPublish?: boolean
  /** Score penalty for many peers behind one IP. @default -5 (gossipsub); 0 with oneHost */
  ipColocationFactorWeight?: number
  /** Peer scoring of the topics this node validates (`scoredTopics`). Spec: specs/protocol.md. */
  score?: GossipScoreSettings
}

/** `network` section of the node config (specs/config.md). */
export interface NetworkInit {
  connections?: ConnectionLimits
  gossipsub?: GossipSettings
  /** Find peers on the local network by multicast DNS and dial them. @default false */
  mdns?: boolean | { intervalMs?: number; serviceTag?: string }
  /** The kad-dht for peer routing and the providers rendezvous (dms/network/discovery.ts). @default off */
  dht?: DhtInit
  /** Circuit relay v2: serve as a relay, reserve a slot on one (dms/network/nat.ts). @default {} */
  relay?: RelayInit
  /** AutoNAT and DCUtR hole punching (dms/network/nat.ts). @default both on */
  nat?: NatInit
  /** A private network: the swarm key file every peer must share (dms/network/pnet.ts). */
  pnet?: { keyFile: string }
  /** Addresses to announce instead of the listen addresses (e.g. a public address behind a port forward). */
  announce?: string[]
}

export interface HostInit extends NetworkInit {
  /** Multiaddrs to listen on. @default ['/ip4/127.0.0.1/tcp/0'] */
  listen?: string[]
  /** Multiaddrs (with /p2p/<id>) to dial at start. @default [] */
  bootstrap?: string[]
  /**
   * Gossip topics whose messages this node validates: a message the validator rejects lowers its
   * sender's score on that topic (`gossipsub.score`). @default []
   */
  scoredTopics?: string[]
  /**
   * Settings for many nodes on one host (tests, devnet, benchmarks): no per-host inbound dial rate
   * limit and no gossipsub IP-colocation penalty (gossipsub graylists many peers on one IP). Explicit `connections` and
   * `gossipsub` values win. Keep false on a real network, where both protect you.
   * @default false
   */
  oneHost?: boolean
  /** This node's roles, announced to peers in identify's agent version (`dms peers`). @default [] */
  roles?: string[]
}

/** The libp2p options a HostInit stands for (exported for tests and the config docs). */
export function hostOptions(init: HostInit): {
  connectionManager: ConnectionLimits
  gossipsub: Partial<GossipsubOpts>
} {
  const oneHost = init.oneHost ?? false
  const c = init.connections ?? {}
  const g = init.gossipsub ?? {}
  const connectionManager: ConnectionLimits = {
    ...(oneHost ? { inboundConnectionThreshold: Infinity } : {}),
    ...definedOnly({ ...c }),
  }
  const colocation = g.ipColocationFactorWeight ?? (oneHost ? 0 : undefined)
  const gossip: Partial<GossipsubOpts> = definedOnly({
    D: g.D,
    Dlo: g.Dlo,
    Dhi: g.Dhi,
    Dlazy: g.Dlazy,
    heartbeatInterval: g.heartbeatIntervalMs,
    floodPublish: g.floodPublish,
  })
  Object.assign(gossip, scoreOptions(init.scoredTopics ?? [], g.score ?? {}, colocation))
  return { connectionManager, gossipsub: gossip }
}

function definedOnly<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T
}

/**
 * Identifies a gossip message by origin and sequence number (the default message id under
 * StrictSign) before its signature is checked. Without it gossipsub verifies the signature of
 * every duplicate copy (about D per message and node); with it, duplicates are dropped first.
 * Measured with scripts/bench-actors.ts: see specs/protocol.md ("Performance").
 */
function fastMsgIdFn(msg: { from?: Uint8Array; seqno?: Uint8Array; data?: Uint8Array }): string {
  const from = msg.from === undefined ? '' : Buffer.from(msg.from).toString('base64')
  const seqno = msg.seqno === undefined ? '' : Buffer.from(msg.seqno).toString('base64')
  return `${from}/${seqno}`
}

/**
 * Builds (does not start) a libp2p host whose peer id derives from the node's key. `clock` drives
 * the relay's limits and sweeps when it serves. @default systemClock
 */
export async function createHost(
  key: KeyPair,
  init: HostInit = {},
  log?: Logger,
  clock?: Clock,
  /** How a relay checks the approval credentials peers present (needed with `relay.serve`). */
  relayCredentials?: CredentialCheck,
): Promise<Host> {
  const privateKey = privateKeyFromRaw(key.libp2pRaw())
  const boot = init.bootstrap ?? []
  const opts = hostOptions(init)
  const discovery: Array<ReturnType<typeof bootstrap> | ReturnType<typeof mdns>> = []
  if (boot.length > 0) discovery.push(bootstrap({ list: boot, timeout: 0 }))
  if (init.mdns !== undefined && init.mdns !== false) {
    const m = init.mdns === true ? {} : init.mdns
    // Loaded only when configured, as the DHT is (an idle node's memory: specs/benchmarks.md).
    const { mdns } = await import('@libp2p/mdns')
    discovery.push(mdns({ interval: m.intervalMs, serviceTag: m.serviceTag }))
  }
  const nat = natParts(init.relay, init.nat, {
    clock,
    ...(log !== undefined ? { log } : {}),
    ...(relayCredentials !== undefined ? { credentials: relayCredentials } : {}),
  })
  halfWindowUpdates()
  const node = await createLibp2p({
    privateKey,
    start: false,
    nodeInfo: { userAgent: userAgent(init.roles ?? []) },
    addresses: {
      listen: [...(init.listen ?? ['/ip4/127.0.0.1/tcp/0']), ...nat.listen],
      ...(init.announce !== undefined ? { announce: init.announce } : {}),
    },
    transports: [tcp(), ...(nat.transports as [])],
    ...(init.pnet !== undefined ? { connectionProtector: protector(readSwarmKey(init.pnet.keyFile)) } : {}),
    connectionEncrypters: [noise({ crypto: noiseCrypto })], // node:crypto only (noise-crypto.ts)
    streamMuxers: [yamux()],
    peerDiscovery: discovery,
    connectionManager: opts.connectionManager,
    ...(nat.gater !== undefined ? { connectionGater: nat.gater } : {}),
    services: {
      identify: identify(),
      ping: ping(),
      pubsub: gossipsub({
        emitSelf: false,
        allowPublishToZeroTopicPeers: true,
        fastMsgIdFn,
        // One RPC of a peer at a time, each message validated (and its sender scored) before the
        // next is read: a flooder is judged on its current score and slowed by flow control.
        awaitRpcHandler: true,
        awaitRpcMessageHandler: true,
        ...opts.gossipsub,
      }),
      ...(init.dht !== undefined ? { dht: await dhtService(init.dht) } : {}),
      ...nat.services,
    },
  })
  if (init.mdns !== undefined && init.mdns !== false) {
    // libp2p 3 records discovered peers but does not dial them; bootstrap dials its own list.
    node.addEventListener('peer:discovery', (evt) => {
      const id = evt.detail.id
      if (id.equals(node.peerId) || node.getConnections(id).length > 0) return
      node.dial(id).catch((err: unknown) => log?.debug({ err, peer: id.toString() }, 'mdns dial failed'))
    })
  }
  if (init.dht?.mode === 'server') {
    // clientMode false still starts as a client until libp2p judges the node reachable.
    const dht = node.services.dht
    node.addEventListener('start', () => {
      dht?.setMode('server').catch((err: unknown) => log?.warn({ err }, 'could not make the DHT a server'))
    })
  }
  return node
}
