/**
 * Who the relay serves (`network.relay.serve`): only approved peers hold reservations and are
 * relayed, through libp2p's ConnectionGater hooks that circuit relay v2 asks before each
 * reservation (`denyInboundRelayReservation`) and each relayed connection
 * (`denyOutboundRelayedConnection`, asked with its source; its destination holds a reservation).
 *
 * - A reservation: the peer's approval credential (approvals.ts) is valid; the reservations
 *   already held from its address (IPv4 address, IPv6 /64) are fewer than
 *   `maxReservationsPerAddress`; and a peer not approved as a provider leaves
 *   `providerShare` of `maxReservations` free for providers behind NAT.
 * - A relayed connection: both ends approved, neither over its limits (meter.ts).
 * - Every `sweepMs`, a reservation whose holder's credential expired (not renewed: revoked) is
 *   dropped and its relayed connections cut.
 * Spec: specs/protocol.md ("NAT traversal"), specs/config.md (`network.relay`).
 */
import type { Connection, ConnectionGater, PeerId } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'
import type { Logger } from 'pino'
import type { Clock } from '../../../actors/clock.js'
import type { RelayApprovals } from './approvals.js'
import type { CircuitMeter } from './meter.js'

/** Why a reservation or a relayed connection was refused (the label of its counter). */
export type RelayRefusal = 'not_approved' | 'address_cap' | 'provider_share' | 'peer_data' | 'circuits'

export interface RelayGateInit {
  /** @default 32 */
  maxReservations?: number
  /** @default 4 */
  maxReservationsPerAddress?: number
  /** Share of `maxReservations` only peers approved as providers may take. @default 0.5 */
  providerShare?: number
  /** How often reservations are checked against their holders' credentials, ms. @default 10000 */
  sweepMs?: number
}

/** What the gate reads of the relay server and the host. */
export interface RelayView {
  /** Reservations held, by peer, with the address each was made from. */
  reservations: {
    has(peer: PeerId): boolean
    delete(peer: PeerId): void
    entries(): Iterable<[PeerId, { addr: Multiaddr }]>
  }
  connections(peer: PeerId): Connection[]
}

/** The part of a multiaddr that one reservation cap counts: the IPv4 address, or the IPv6 /64. */
export function addressKey(addr: Multiaddr): string | undefined {
  for (const c of addr.getComponents()) {
    if (c.name === 'ip4') return c.value
    if (c.name === 'ip6' && c.value !== undefined) return `${ip6Groups(c.value).slice(0, 4).join(':')}::/64`
  }
  return undefined
}

function ip6Groups(ip: string): string[] {
  const [head, tail] = ip.split('::') as [string, string | undefined]
  const a = head === '' ? [] : head.split(':')
  const b = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups =
    tail === undefined ? a : [...a, ...Array<string>(Math.max(0, 8 - a.length - b.length)).fill('0'), ...b]
  return groups.map((g) => (g.includes('.') ? g : (parseInt(g, 16) || 0).toString(16)))
}

export class RelayGate {
  private view?: RelayView
  private timer?: unknown
  /** Reservations and relayed connections refused, by reason. */
  readonly refused: Record<RelayRefusal, number> = {
    not_approved: 0,
    address_cap: 0,
    provider_share: 0,
    peer_data: 0,
    circuits: 0,
  }

  constructor(
    private readonly c: { clock: Clock; log: Logger; approvals: RelayApprovals; meter: CircuitMeter },
    private readonly init: RelayGateInit = {},
  ) {}

  /** The ConnectionGater hooks of the relay. */
  gater(): Pick<ConnectionGater, 'denyInboundRelayReservation' | 'denyOutboundRelayedConnection'> {
    return {
      denyInboundRelayReservation: async (peer) => this.deny(peer, await this.reservationRefusal(peer)),
      denyOutboundRelayedConnection: async (src, dst) => this.deny(src, await this.relayedRefusal(src, dst)),
    }
  }

  /** Starts the sweep over `view`'s reservations. */
  start(view: RelayView): void {
    this.view = view
    this.schedule()
  }

  stop(): void {
    if (this.timer !== undefined) this.c.clock.clearTimeout(this.timer)
    this.timer = undefined
    this.view = undefined
  }

  /** Why `peer` may not reserve a slot now, or undefined. */
  async reservationRefusal(peer: PeerId): Promise<RelayRefusal | undefined> {
    const approved = await this.c.approvals.await(peer.toString())
    const view = this.view
    if (approved === undefined || view === undefined) return 'not_approved'
    if (view.reservations.has(peer)) return undefined // a refresh keeps its slot
    const key = view
      .connections(peer)
      .map((conn) => addressKey(conn.remoteAddr))
      .find((k) => k !== undefined)
    const held = [...view.reservations.entries()]
    const cap = this.init.maxReservationsPerAddress ?? 4
    if (key !== undefined && held.filter(([, r]) => addressKey(r.addr) === key).length >= cap)
      return 'address_cap'
    if (!approved.roles.includes('provider')) {
      const max = this.init.maxReservations ?? 32
      const kept = Math.ceil(max * (this.init.providerShare ?? 0.5))
      const others = held.filter(
        ([p]) => this.c.approvals.approved(p.toString())?.roles.includes('provider') !== true,
      )
      if (others.length >= max - kept) return 'provider_share'
    }
    return undefined
  }

  /** Why `src` may not be relayed to `dst` (which holds a reservation) now, or undefined. */
  async relayedRefusal(src: PeerId, dst: PeerId): Promise<RelayRefusal | undefined> {
    const [from, to] = [src.toString(), dst.toString()]
    if ((await this.c.approvals.await(from)) === undefined || this.c.approvals.approved(to) === undefined)
      return 'not_approved'
    return this.c.meter.refusal(from) ?? this.c.meter.refusal(to)
  }

  private deny(peer: PeerId, why: RelayRefusal | undefined): boolean {
    if (why === undefined) return false
    this.refused[why]++
    this.c.log.debug({ peer: peer.toString(), why }, 'relay: refused')
    return true
  }

  private schedule(): void {
    this.timer = this.c.clock.setTimeout(() => {
      this.sweep()
      if (this.view !== undefined) this.schedule()
    }, this.init.sweepMs ?? 10_000)
  }

  /** Drops the reservations (and cuts the relayed connections) of peers no longer approved. */
  sweep(): void {
    const view = this.view
    if (view === undefined) return
    for (const [peer] of [...view.reservations.entries()]) {
      const id = peer.toString()
      if (this.c.approvals.approved(id) !== undefined) continue
      view.reservations.delete(peer)
      this.c.meter.cutPeer(id, 'not_approved')
      this.c.log.info({ peer: id }, 'relay: reservation dropped, its approval expired')
    }
  }
}
