import { systemClock, type Clock } from '../../actors/clock.js'
import { KeyPair } from '../../actors/identity.js'
import { dmsCodecs } from '../../dms/protocol/behaviours.js'
import { PROTOCOL_VERSION } from '../../dms/protocol/version.js'
import { ActorSystem, type ActorSystemInit, type RejectReason } from '../../actors/system.js'
import { createHost, type Host, type HostInit } from '../../dms/network/host.js'
import { Libp2pTransport, type Libp2pTransportInit } from '../../dms/network/transport.js'
import { silentLogger } from '../../dms/log.js'

export interface TestPeer {
  key: KeyPair
  host: Host
  transport: Libp2pTransport
  system: ActorSystem
  /** The first listen address with /p2p/<id>. */
  addr: string
  stop(): Promise<void>
}

export interface PeerInit {
  /** Drives the transport's frame read deadline (a ManualClock in tests). @default systemClock */
  clock?: Clock
  /** The actor system's time (envelope times, request timeouts). @default systemClock */
  actorClock?: Clock
  host?: HostInit
  transport?: Libp2pTransportInit
  system?: ActorSystemInit
}

/** A real libp2p host on 127.0.0.1 with an actor system on it (one-host settings). */
export async function startPeer(bootstrap: string[] = [], init: PeerInit = {}): Promise<TestPeer> {
  const key = KeyPair.generate()
  const host = await createHost(key, { oneHost: true, bootstrap, ...init.host })
  const transport = new Libp2pTransport({ host, log: silentLogger, clock: init.clock }, init.transport)
  // DMS payload codecs; behaviours outside DMS (the runtime's own tests) fall back to JSON.
  const system = new ActorSystem(
    { transport, clock: init.actorClock ?? systemClock, log: silentLogger, codecs: dmsCodecs() },
    { version: PROTOCOL_VERSION, ...init.system },
  )
  await host.start()
  await transport.start()
  return {
    key,
    host,
    transport,
    system,
    addr: `${host.getMultiaddrs()[0].toString()}`,
    async stop() {
      system.stop()
      await transport.stop()
      await host.stop()
    },
  }
}

/**
 * Resolves once `n` peers are live subscribers of `topic` for `peer`'s transport: with an open
 * outbound gossip stream, so a message published then reaches them. A subscription seen before
 * that stream is open is not enough: gossipsub sends to no one and the message is lost.
 */
export function waitForTopicPeers(
  peer: Pick<TestPeer, 'transport'>,
  topic: string,
  n: number,
): Promise<void> {
  return peer.transport.waitForTopicPeers(topic, n)
}

/** Resolves once `system` has counted `n` rejections for `reason` in total (event-driven). */
export function rejected(system: ActorSystem, reason: RejectReason, n = 1): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if ((system.rejections[reason] ?? 0) >= n) {
        off()
        resolve()
      }
    }
    const off = system.observe(check)
    check()
  })
}
