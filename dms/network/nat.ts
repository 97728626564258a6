/**
 * Reaching nodes behind NAT: AutoNAT v2 (learn whether our addresses are reachable), circuit relay
 * v2 (a NATed node reserves a slot on a relay and is dialled through it; any node may serve as a
 * relay for approved peers, with limits: relay/) and DCUtR (a relayed connection is upgraded to a
 * direct one). Spec: specs/protocol.md ("NAT traversal"), specs/config.md (`network.relay`,
 * `network.nat`).
 */
import { autoNATv2 } from '@libp2p/autonat-v2'
import { circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { dcutr } from '@libp2p/dcutr'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { DmsError } from '../../actors/errors.js'
import type { CredentialCheck } from './relay/approvals.js'
import { relayParts, type RelayParts } from './relay/service.js'

/** `network.relay`: serve as a relay for approved peers, and/or reserve a slot on relays. */
export interface RelayInit {
  /**
   * Serve as a circuit relay v2 for approved peers (a node on a public address): only peers that
   * presented a valid approval credential of `contractDb` hold reservations and are relayed.
   * @default false
   */
  serve?: boolean
  /**
   * Peer id of the contract-db whose approval credentials the relay honours. @default the
   * node's own (`provider.contractDb`, else `requester.contractDb.peer`); a contract-db: itself
   */
  contractDb?: string
  /** Reservations held at once for other peers. @default 32 */
  maxReservations?: number
  /** Reservations held at once from one address (IPv4 address, IPv6 /64). @default 4 */
  maxReservationsPerAddress?: number
  /** Share of `maxReservations` kept for peers approved as providers (role `provider`). @default 0.5 */
  providerShare?: number
  /** How long one relayed connection may stay open, ms; 0 = no limit. @default 3600000 */
  durationLimitMs?: number
  /** Bytes one relayed connection may carry, both ways together; 0 = no limit. @default 1073741824 */
  dataLimitBytes?: number
  /** Bytes the relayed connections of one peer may carry per `peerDataWindowMs`; 0 = no limit. @default 4294967296 */
  peerDataLimitBytes?: number
  /** @default 3600000 */
  peerDataWindowMs?: number
  /** Relayed connections one peer may have open at once through this relay; 0 = no limit. @default 16 */
  maxCircuitsPerPeer?: number
  /**
   * Reserve a slot on a relay among the connected peers and advertise the relayed address
   * (`.../p2p/<relay>/p2p-circuit`): a node behind NAT. @default false
   */
  reserve?: boolean
}

/** `network.relay.serve` without a contract-db to take approvals from. */
export class RelayConfigError extends DmsError {
  constructor() {
    super(
      'RELAY_CONFIG',
      'network.relay.serve relays approved peers only: set network.relay.contractDb to the peer id of the contract-db that approves them',
    )
  }
}

/** `network.nat`: learning reachability and upgrading relayed connections. */
export interface NatInit {
  /** Ask peers to dial us back (AutoNAT) to learn whether our addresses are reachable. @default true */
  autonat?: boolean
  /** Upgrade relayed connections to direct ones (DCUtR: a direct dial, else a hole punch). @default true */
  holePunching?: boolean
}

/** The transports, services, gater hooks and listen addresses the NAT settings add to a host. */
export function natParts(
  relay: RelayInit = {},
  nat: NatInit = {},
  c: { clock?: Clock; log?: Logger; credentials?: CredentialCheck } = {},
): {
  transports: unknown[]
  services: Record<string, unknown>
  listen: string[]
  /** The relay's ConnectionGater hooks, when it serves. */
  gater?: RelayParts['gater']
} {
  const services: Record<string, unknown> = {}
  if (nat.autonat ?? true) services.autonat = autoNATv2()
  if (nat.holePunching ?? true) services.dcutr = dcutr()
  let served: RelayParts | undefined
  if (relay.serve === true) {
    if (relay.contractDb === undefined) throw new RelayConfigError()
    // The composition root passes it with `serve` (dms/peer-base.ts).
    if (c.credentials === undefined) throw new Error('a relay needs a credential check')
    served = relayParts({ ...relay, contractDb: relay.contractDb }, { ...c, credentials: c.credentials })
    services.relay = served.service
  }
  return {
    transports: [circuitRelayTransport()],
    services,
    listen: relay.reserve === true ? ['/p2p-circuit'] : [],
    ...(served !== undefined ? { gater: served.gater } : {}),
  }
}
