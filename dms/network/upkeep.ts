/**
 * The network's upkeep around a started libp2p host: the dial keeper (re-dials with backoff) and,
 * with the DHT, the providers rendezvous. Both adapt the host to their small interfaces here.
 */
import type { Connection, IdentifyResult } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import { multiaddr } from '@multiformats/multiaddr'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { DialKeeper, type DialKeeperInit, type KeeperHost } from './dial-keeper.js'
import { Rendezvous, type DhtInit, type RendezvousHost } from './discovery.js'
import type { Host } from './host.js'
import { connectionType, rolesOf } from './peer-info.js'
import { looksLikeKeyMismatch } from './pnet.js'

export interface UpkeepInit {
  bootstrap?: string[]
  keeper?: Omit<DialKeeperInit, 'bootstrap'>
  dht?: DhtInit
  /** Announce this node on the DHT as a provider. */
  provider?: boolean
  /** A private network is configured (a failed handshake then names the key). */
  pnet?: boolean
}

export interface Upkeep {
  keeper: DialKeeper
  rendezvous?: Rendezvous
  stop(): Promise<void>
}

/** `addr` ending in `/p2p/<peer>`. */
const withPeer = (addr: string, peer: string) =>
  addr.endsWith(`/p2p/${peer}`) ? addr : `${addr}/p2p/${peer}`

function dialer(host: Host, log: Logger | undefined, pnet: boolean) {
  return async (peer: string, addrs: string[], signal: AbortSignal): Promise<void> => {
    try {
      await host.dial(addrs.length > 0 ? addrs.map((a) => multiaddr(a)) : peerIdFromString(peer), { signal })
    } catch (err) {
      if (pnet && looksLikeKeyMismatch(err))
        log?.warn(
          { peer, err: (err as Error).message },
          'connection refused: the handshake failed, the peer likely uses a different pre-shared key (network.pnet)',
        )
      throw err
    }
  }
}

/** How long after its relayed connection closed a direct one still counts as its upgrade. */
const UPGRADE_WINDOW_MS = 30_000
/** At most this many peers' relayed connections are remembered for it. */
const MAX_RELAYED_REMEMBERED = 1000

/**
 * Logs each relayed connection, and its upgrade when a direct one opens beside it (DCUtR), so an
 * operator sees how a NATed peer is reached. The side that did not start the hole punch may see
 * the relayed connection closed (by the other side, once its direct dial succeeded) before its
 * own direct one is reported open: a relayed connection closed within UPGRADE_WINDOW_MS still
 * counts. Returns the unsubscribe function.
 */
export function logConnectionTypes(
  host: Host,
  clock: Pick<Clock, 'now'>,
  log: Logger | undefined,
): () => void {
  /** Peers whose relayed connection closed, and when (clock ms); bounded, oldest out first. */
  const relayedClosed = new Map<string, number>()
  const opened = (e: CustomEvent<Connection>) => {
    const conn = e.detail
    const peer = conn.remotePeer.toString()
    if (connectionType(conn) === 'relayed') {
      log?.info(
        { peer, addr: conn.remoteAddr.toString(), direction: conn.direction },
        'relayed connection opened',
      )
      return
    }
    const closedAt = relayedClosed.get(peer)
    relayedClosed.delete(peer)
    const beside = host
      .getConnections(conn.remotePeer)
      .some((c) => c !== conn && connectionType(c) === 'relayed')
    if (beside || (closedAt !== undefined && clock.now() - closedAt <= UPGRADE_WINDOW_MS))
      log?.info({ peer, addr: conn.remoteAddr.toString() }, 'relayed connection upgraded to direct')
  }
  const closed = (e: CustomEvent<Connection>) => {
    const conn = e.detail
    if (connectionType(conn) !== 'relayed') return
    const peer = conn.remotePeer.toString()
    relayedClosed.delete(peer)
    relayedClosed.set(peer, clock.now())
    if (relayedClosed.size > MAX_RELAYED_REMEMBERED) relayedClosed.delete(relayedClosed.keys().next().value!)
  }
  host.addEventListener('connection:open', opened)
  host.addEventListener('connection:close', closed)
  return () => {
    host.removeEventListener('connection:open', opened)
    host.removeEventListener('connection:close', closed)
  }
}

/** Starts the keeper (and the rendezvous with the DHT) on a started host. */
export function startUpkeep(host: Host, c: { clock: Clock; log?: Logger }, init: UpkeepInit): Upkeep {
  const dial = dialer(host, c.log, init.pnet === true)
  const connected = (peer: string) => host.getConnections(peerIdFromString(peer)).length > 0
  const keeperHost: KeeperHost = {
    dial,
    connected,
    onPeer: (fn) => {
      const on = (e: CustomEvent<{ toString(): string }>) => fn(e.detail.toString(), 'connect')
      const off = (e: CustomEvent<{ toString(): string }>) => fn(e.detail.toString(), 'disconnect')
      const identified = (e: CustomEvent<IdentifyResult>) => {
        if (rolesOf(e.detail.agentVersion) !== undefined) fn(e.detail.peerId.toString(), 'dms')
      }
      host.addEventListener('peer:connect', on)
      host.addEventListener('peer:disconnect', off)
      host.addEventListener('peer:identify', identified)
      return () => {
        host.removeEventListener('peer:connect', on)
        host.removeEventListener('peer:disconnect', off)
        host.removeEventListener('peer:identify', identified)
      }
    },
  }
  const keeper = new DialKeeper(
    { host: keeperHost, clock: c.clock, log: c.log },
    {
      ...init.keeper,
      bootstrap: init.bootstrap,
    },
  )
  keeper.start()
  const offConnections = logConnectionTypes(host, c.clock, c.log)
  let rendezvous: Rendezvous | undefined
  const dht = host.services.dht
  if (init.dht !== undefined && dht !== undefined) {
    const rHost: RendezvousHost = {
      self: host.peerId.toString(),
      connected,
      dial,
      provide: (key, signal) => host.contentRouting.provide(key, { signal }),
      findProviders: async function* (key, signal) {
        for await (const p of host.contentRouting.findProviders(key, { signal }))
          yield {
            id: p.id.toString(),
            addrs: p.multiaddrs.map((a) => withPeer(a.toString(), p.id.toString())),
          }
      },
    }
    rendezvous = new Rendezvous(
      { host: rHost, clock: c.clock, log: c.log },
      { ...init.dht, announce: init.provider === true },
    )
    rendezvous.start()
  }
  return {
    keeper,
    rendezvous,
    stop: async () => {
      offConnections()
      keeper.stop()
      await rendezvous?.stop()
    },
  }
}
