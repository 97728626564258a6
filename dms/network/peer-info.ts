/**
 * What this node tells its peers about itself (roles, in identify's agent version) and what it
 * knows of each connected peer: roles, addresses, latency and how it is connected (direct or
 * through a relay). Read by `GET /v1/peers` and `dms peers` (specs/rest-api.md).
 */
import type { Connection, PeerStore } from '@libp2p/interface'

/** Roles a DMS node announces. */
export const ROLES = ['requester', 'provider', 'contract-db', 'relay'] as const
export type Role = (typeof ROLES)[number]

const AGENT = /^dms\/(\S+)(?: roles=([a-z+-]*))?/

/** The agent version string for `roles` (e.g. `dms/0.1.0 roles=provider+relay`). */
export function userAgent(roles: string[], version = '0.1.0'): string {
  return roles.length === 0 ? `dms/${version}` : `dms/${version} roles=${roles.join('+')}`
}

/** The roles in a peer's agent version; undefined when it is not a DMS node (or not identified yet). */
export function rolesOf(agentVersion: string | undefined): Role[] | undefined {
  const m = agentVersion === undefined ? null : AGENT.exec(agentVersion)
  if (m === null) return undefined
  return (m[2] ?? '').split('+').filter((r): r is Role => (ROLES as readonly string[]).includes(r))
}

/** How a connection reaches the peer. */
export type ConnectionType = 'direct' | 'relayed'

export const connectionType = (c: Pick<Connection, 'remoteAddr'>): ConnectionType =>
  c.remoteAddr.toString().includes('/p2p-circuit') ? 'relayed' : 'direct'

/** One connected peer as the node sees it. */
export interface PeerView {
  peerId: string
  roles?: Role[]
  addrs: string[]
  direction: 'inbound' | 'outbound'
  /** `direct` when any connection is direct. */
  connection: ConnectionType
  /** Round-trip time of the last ping (libp2p's connection monitor), ms. */
  latencyMs?: number
}

/** The connected peers of `host`, one entry per peer. */
export async function peerViews(host: {
  getConnections(): Connection[]
  peerStore: PeerStore
}): Promise<PeerView[]> {
  const peers = new Map<string, PeerView>()
  for (const c of host.getConnections()) {
    const id = c.remotePeer.toString()
    let p = peers.get(id)
    if (p === undefined) {
      p = { peerId: id, addrs: [], direction: c.direction, connection: connectionType(c) }
      peers.set(id, p)
      const agent = await host.peerStore
        .get(c.remotePeer)
        .then((info) => info.metadata.get('AgentVersion'))
        .catch(() => undefined)
      const roles = rolesOf(agent === undefined ? undefined : new TextDecoder().decode(agent))
      if (roles !== undefined) p.roles = roles
    }
    p.addrs.push(c.remoteAddr.toString())
    if (connectionType(c) === 'direct') p.connection = 'direct'
    if (c.rtt !== undefined && (p.latencyMs === undefined || c.rtt < p.latencyMs)) p.latencyMs = c.rtt
  }
  return [...peers.values()]
}
