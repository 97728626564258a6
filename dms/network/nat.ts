/**
 * Reaching nodes behind NAT: AutoNAT v2 (learn whether our addresses are reachable), circuit relay
 * v2 (a NATed node reserves a slot on a relay and is dialled through it; any node may serve as a
 * relay, with limits) and DCUtR (a relayed connection is upgraded to a direct one). Spec:
 * specs/protocol.md ("NAT traversal"), specs/config.md (`network.relay`, `network.nat`).
 */
import { autoNATv2 } from '@libp2p/autonat-v2'
import { circuitRelayServer, circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { dcutr } from '@libp2p/dcutr'

/** `network.relay`: serve as a relay for others, and/or reserve a slot on relays. */
export interface RelayInit {
  /**
   * Serve as a circuit relay v2 for other peers (a node on a public address). Relayed
   * connections carry DMS traffic only when both limits are unset (0 = unset).
   * @default false
   */
  serve?: boolean
  /** Reservations held at once for other peers. @default 32 */
  maxReservations?: number
  /** How long one relayed connection may stay open, ms; 0 = no limit. @default 0 */
  durationLimitMs?: number
  /** Bytes one relayed connection may carry each way; 0 = no limit. @default 0 */
  dataLimitBytes?: number
  /**
   * Reserve a slot on a relay among the connected peers and advertise the relayed address
   * (`.../p2p/<relay>/p2p-circuit`): a node behind NAT. @default false
   */
  reserve?: boolean
}

/** `network.nat`: learning reachability and upgrading relayed connections. */
export interface NatInit {
  /** Ask peers to dial us back (AutoNAT) to learn whether our addresses are reachable. @default true */
  autonat?: boolean
  /** Upgrade relayed connections to direct ones (DCUtR: a direct dial, else a hole punch). @default true */
  holePunching?: boolean
}

/** The transports, services and listen addresses the NAT settings add to a host. */
export function natParts(
  relay: RelayInit = {},
  nat: NatInit = {},
): { transports: unknown[]; services: Record<string, unknown>; listen: string[] } {
  const services: Record<string, unknown> = {}
  if (nat.autonat ?? true) services.autonat = autoNATv2()
  if (nat.holePunching ?? true) services.dcutr = dcutr()
  if (relay.serve === true) {
    const duration = relay.durationLimitMs ?? 0
    const data = relay.dataLimitBytes ?? 0
    services.relay = circuitRelayServer({
      reservations: {
        maxReservations: relay.maxReservations ?? 32,
        applyDefaultLimit: duration > 0 || data > 0,
        ...(duration > 0 ? { defaultDurationLimit: duration } : {}),
        ...(data > 0 ? { defaultDataLimit: BigInt(data) } : {}),
      },
    })
  }
  return {
    transports: [circuitRelayTransport()],
    services,
    listen: relay.reserve === true ? ['/p2p-circuit'] : [],
  }
}
