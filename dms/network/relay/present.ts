/**
 * A node's side of `/dms/relay/approval/1.0.0` (wire.ts): it presents its approval credential to
 * every relay it connects to (a peer that handles the protocol, learnt by identify) and again to
 * each after every renewal, so relays reserve it a slot and relay its connections. A node behind
 * NAT whose reservation was refused because its credential came later than its request (its first
 * start: the credential is fetched once the host runs) reconnects to the relay once per credential:
 * libp2p asks a relay for a slot when it connects to it, not again after a refusal.
 * Spec: specs/protocol.md ("NAT traversal").
 */
import type { Libp2p, PeerId } from '@libp2p/interface'
import type { Logger } from 'pino'
import type { Clock } from '../../../actors/clock.js'
import { RELAY_APPROVAL_PROTOCOL, RELAY_APPROVAL_TIMEOUT_MS, writeApproval } from './wire.js'

export interface ApprovalPresenterInit {
  /**
   * This node reserves relay slots (`network.relay.reserve`): holding none a while after
   * presenting a new credential to a relay, it reconnects to that relay. @default false
   */
  reserve?: boolean
  /** That while, ms: longer than libp2p's 5 s for a reservation. @default 6000 */
  reserveSettleMs?: number
}

export class ApprovalPresenter {
  private topology?: string
  private readonly timers = new Set<unknown>()
  /** The credential (its signature) each relay was reconnected to for. */
  private readonly reconnected = new Map<string, string>()
  private stopped = false

  constructor(
    private readonly c: {
      host: Pick<
        Libp2p,
        'register' | 'unregister' | 'dialProtocol' | 'getPeers' | 'peerStore' | 'getMultiaddrs' | 'hangUp'
      >
      clock: Clock
      log: Logger
      /**
       * The credentials this node holds now (one per contract-db), encoded for the wire, each with
       * an id that changes when it is renewed (its signature).
       */
      credentials: () => Array<{ id: string; bytes: Uint8Array }>
    },
    private readonly init: ApprovalPresenterInit = {},
  ) {}

  async start(): Promise<void> {
    if (this.topology !== undefined) return
    this.stopped = false
    this.topology = await this.c.host.register(RELAY_APPROVAL_PROTOCOL, {
      onConnect: (peer) => this.present(peer),
    })
    this.renewed()
  }

  stop(): void {
    this.stopped = true
    if (this.topology !== undefined) this.c.host.unregister(this.topology)
    this.topology = undefined
    for (const t of this.timers) this.c.clock.clearTimeout(t)
    this.timers.clear()
  }

  /** Presents the credentials held now to every connected relay (after a renewal). */
  renewed(): void {
    for (const peer of this.c.host.getPeers())
      void this.c.host.peerStore
        .get(peer)
        .then((p) => {
          if (p.protocols.includes(RELAY_APPROVAL_PROTOCOL)) this.present(peer)
        })
        .catch(() => undefined)
  }

  private present(relay: PeerId): void {
    if (this.stopped) return
    for (const cred of this.c.credentials()) {
      const signal = AbortSignal.timeout(RELAY_APPROVAL_TIMEOUT_MS)
      this.c.host
        .dialProtocol(relay, RELAY_APPROVAL_PROTOCOL, { signal })
        .then((stream) => writeApproval(stream, cred.bytes, signal))
        .then(() => {
          this.c.log.debug({ relay: relay.toString() }, 'approval credential presented to a relay')
          if (this.init.reserve === true) this.checkReservation(relay, cred.id)
        })
        .catch((err: unknown) =>
          this.c.log.debug(
            { err, relay: relay.toString() },
            'could not present the approval credential to a relay',
          ),
        )
    }
  }

  private checkReservation(relay: PeerId, signature: string): void {
    const id = relay.toString()
    if (this.reconnected.get(id) === signature) return
    const timer = this.c.clock.setTimeout(() => {
      this.timers.delete(timer)
      const reserved = this.c.host.getMultiaddrs().some((a) => a.toString().includes('/p2p-circuit'))
      if (this.stopped || reserved || this.reconnected.get(id) === signature) return
      this.reconnected.set(id, signature)
      if (this.reconnected.size > 64) this.reconnected.delete(this.reconnected.keys().next().value!)
      this.c.log.info(
        { relay: id },
        'no relay slot yet: reconnecting to the relay with the approval credential',
      )
      this.c.host.hangUp(relay).catch(() => undefined)
    }, this.init.reserveSettleMs ?? 6000)
    this.timers.add(timer)
  }
}
