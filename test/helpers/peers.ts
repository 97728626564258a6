import { systemClock } from '../../actors/clock.js'
import { KeyPair } from '../../actors/identity.js'
import { ActorSystem } from '../../actors/system.js'
import { createHost, type Host } from '../../dms/network/host.js'
import { Libp2pTransport } from '../../dms/network/transport.js'
import { silentLogger } from '../../dms/log.js'

export interface TestPeer {
  key: KeyPair
  host: Host
  transport: Libp2pTransport
  system: ActorSystem
  stop(): Promise<void>
}

/** A real libp2p host on 127.0.0.1 with an actor system on it. */
export async function startPeer(bootstrap: string[] = []): Promise<TestPeer> {
  const key = KeyPair.generate()
  const host = await createHost(key, { oneHost: true, bootstrap })
  const transport = new Libp2pTransport({ host, log: silentLogger })
  const system = new ActorSystem({ transport, clock: systemClock, log: silentLogger })
  await host.start()
  await transport.start()
  return {
    key,
    host,
    transport,
    system,
    async stop() {
      system.stop()
      await transport.stop()
      await host.stop()
    },
  }
}

/** Resolves once `host` sees at least `n` subscribers on `topic` (event-driven, no polling). */
export function waitForTopicPeers(host: Host, topic: string, n: number): Promise<void> {
  const pubsub = host.services.pubsub
  return new Promise((resolve) => {
    const check = () => {
      if (pubsub.getSubscribers(topic).length >= n) {
        pubsub.removeEventListener('subscription-change', check)
        resolve()
      }
    }
    pubsub.addEventListener('subscription-change', check)
    check()
  })
}
