/**
 * The relay a node serves (`network.relay.serve`): circuit relay v2 with the library's limits off
 * (meter.ts says why), every circuit metered, the gate's hooks for the host's ConnectionGater, and
 * the handler of `/dms/relay/approval/1.0.0` (wire.ts) where peers present their credentials.
 * Spec: specs/protocol.md ("NAT traversal"), specs/config.md (`network.relay`).
 */
import { circuitRelayServer, type CircuitRelayService } from '@libp2p/circuit-relay-v2'
import type { ConnectionGater, Startable } from '@libp2p/interface'
import type { Logger } from 'pino'
import { systemClock, type Clock } from '../../../actors/clock.js'
import { silentLogger } from '../../log.js'
import { RelayApprovals, type CredentialCheck } from './approvals.js'
import { RelayGate } from './gate.js'
import { CircuitMeter, type HopServer } from './meter.js'
import { readApproval, RELAY_APPROVAL_PROTOCOL, RELAY_APPROVAL_TIMEOUT_MS } from './wire.js'

/** `network.relay` as the relay reads it (the fields of RelayInit it serves with). */
export interface RelayServeInit {
  /** Peer id of the contract-db whose approval credentials are honoured. */
  contractDb: string
  maxReservations?: number
  maxReservationsPerAddress?: number
  providerShare?: number
  durationLimitMs?: number
  dataLimitBytes?: number
  peerDataLimitBytes?: number
  peerDataWindowMs?: number
  maxCircuitsPerPeer?: number
}

/** The defaults of the relay's limits (specs/config.md, `network.relay`). */
export const RELAY_DEFAULTS = {
  maxReservations: 32,
  maxReservationsPerAddress: 4,
  providerShare: 0.5,
  /** An hour: a long job's relayed connection is cut and dialled again hourly, a DCUtR retry too. */
  durationLimitMs: 3_600_000,
  /** Above the largest output archive (provider.maxOutputBytes, 256 MiB) with its inputs. */
  dataLimitBytes: 1024 * 1024 * 1024,
  peerDataLimitBytes: 4 * 1024 * 1024 * 1024,
  peerDataWindowMs: 3_600_000,
  maxCircuitsPerPeer: 16,
} as const

/** The relay service (`host.services.relay`): circuit relay v2 with the parts that guard it. */
export type DmsRelayService = CircuitRelayService & {
  readonly approvals: RelayApprovals
  readonly gate: RelayGate
  readonly meter: CircuitMeter
}

/** A relay's parts: the libp2p service and the hooks for the host's ConnectionGater. */
export interface RelayParts {
  service: (components: Parameters<ReturnType<typeof circuitRelayServer>>[0]) => DmsRelayService
  gater: Pick<ConnectionGater, 'denyInboundRelayReservation' | 'denyOutboundRelayedConnection'>
}

export function relayParts(
  init: RelayServeInit,
  c: { clock?: Clock; log?: Logger; credentials: CredentialCheck },
): RelayParts {
  const clock = c.clock ?? systemClock
  const log = c.log ?? silentLogger
  const d = RELAY_DEFAULTS
  const approvals = new RelayApprovals(
    { clock, log, credentials: c.credentials },
    { contractDb: init.contractDb },
  )
  const meter = new CircuitMeter(
    { clock, log },
    {
      dataLimitBytes: init.dataLimitBytes ?? d.dataLimitBytes,
      durationLimitMs: init.durationLimitMs ?? d.durationLimitMs,
      peerDataLimitBytes: init.peerDataLimitBytes ?? d.peerDataLimitBytes,
      peerDataWindowMs: init.peerDataWindowMs ?? d.peerDataWindowMs,
      maxCircuitsPerPeer: init.maxCircuitsPerPeer ?? d.maxCircuitsPerPeer,
    },
  )
  const maxReservations = init.maxReservations ?? d.maxReservations
  const gate = new RelayGate(
    { clock, log, approvals, meter },
    {
      maxReservations,
      maxReservationsPerAddress: init.maxReservationsPerAddress ?? d.maxReservationsPerAddress,
      providerShare: init.providerShare ?? d.providerShare,
    },
  )
  const make = circuitRelayServer({ reservations: { maxReservations, applyDefaultLimit: false } })
  const service: RelayParts['service'] = (components) => {
    const server = make(components) as CircuitRelayService & HopServer & Startable
    meter.attach(server)
    const start = server.start.bind(server)
    const stop = server.stop.bind(server)
    server.start = async () => {
      await start()
      await components.registrar.handle(
        RELAY_APPROVAL_PROTOCOL,
        async (stream, connection) => {
          const peer = connection.remotePeer.toString()
          try {
            const cred = await readApproval(stream, AbortSignal.timeout(RELAY_APPROVAL_TIMEOUT_MS))
            approvals.present(peer, cred)
            await stream.close()
          } catch (err) {
            log.debug({ err, peer }, 'relay: unreadable approval credential')
            stream.abort(err as Error)
          }
        },
        { maxInboundStreams: 2 },
      )
      gate.start({
        reservations: server.reservations,
        connections: (peer) => components.connectionManager.getConnections(peer),
      })
    }
    server.stop = async () => {
      gate.stop()
      meter.stop()
      await components.registrar.unhandle(RELAY_APPROVAL_PROTOCOL)
      await stop()
    }
    return Object.assign(server, { approvals, gate, meter })
  }
  return { service, gater: gate.gater() }
}
