/**
 * What every DMS process starts first, in this order: the data dir, its database (whose lock
 * refuses a second process before any passphrase is asked), the sealed node key, the libp2p
 * host, the actor transport and the actor system with the DMS codecs. Shared by `DmsNode` and
 * the contract-db's `ContractDbNode`, so both start (and refuse) the same way.
 */
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import type { Logger } from 'pino'
import type { Clock } from '../actors/clock.js'
import type { KeyPair } from '../actors/identity.js'
import type { Lifecycle } from '../actors/lifecycle.js'
import { ActorSystem } from '../actors/system.js'
import type { NetworkConfig } from './config.js'
import { loadOrCreateKey, type PassphraseSource } from './keys.js'
import { child } from './log.js'
import { relayCredentialCheck } from './contract-clients/relay-credentials.js'
import { createHost, type Host } from './network/host.js'
import { Libp2pTransport } from './network/transport.js'
import { startUpkeep, type Upkeep } from './network/upkeep.js'
import { openDb, type Db } from './store/db.js'
import { BID_REQUEST_TOPIC, CAPACITY_TOPIC } from './protocol/handles.js'
import { dmsCodecs } from './protocol/behaviours.js'
import { PROTOCOL_VERSION } from './protocol/version.js'

export interface PeerBaseConfig {
  dataDir: string
  listen?: string[]
  bootstrap?: string[]
  oneHost?: boolean
  network?: NetworkConfig
  /** Roles announced to peers (identify's agent version) and whether to announce as a provider on the DHT. */
  roles?: string[]
  /**
   * The contract-db whose approval credentials this node's relay honours when
   * `network.relay.contractDb` names none; `'self'` for the contract-db's own process.
   */
  contractDb?: string
}

export interface PeerBase {
  db: Db
  key: KeyPair
  host: Host
  transport: Libp2pTransport
  system: ActorSystem
  /**
   * Payloads refused at decode, by behaviour and reason (too_long, bad_shape, bad_wire, ...):
   * `dms_payloads_refused_total` (specs/protocol.md, "Bounds"). Each is also `bad_payload`.
   */
  payloadRefusals: Record<string, Record<string, number>>
  /** Re-dials (the dial keeper) and DHT discovery around the host. */
  upkeep: Upkeep
  /** Calls `fn` with each payload refused from now on; returns the unsubscribe function. */
  onPayloadRefused(fn: (behaviour: string, reason: string) => void): () => void
}

/** The contract-db a relay takes approvals from: its own setting, else the node's contract-db. */
function relayContractDb(own: string | undefined, cfg: PeerBaseConfig, key: KeyPair): string | undefined {
  const cdb = own ?? cfg.contractDb
  return cdb === 'self' ? peerIdFromPrivateKey(privateKeyFromRaw(key.libp2pRaw())).toString() : cdb
}

/**
 * Starts the shared parts. Each part's stop goes onto `lifecycle` as soon as the part has started,
 * so a failed start stops exactly what was started.
 */
export async function startPeerBase(
  cfg: PeerBaseConfig,
  c: { clock: Clock; log: Logger; passphrase: PassphraseSource },
  lifecycle: Lifecycle,
): Promise<PeerBase> {
  await mkdir(cfg.dataDir, { recursive: true, mode: 0o700 })
  const db = await openDb(join(cfg.dataDir, 'db'))
  lifecycle.onStop(() => db.close(), 'db')
  const loaded = await loadOrCreateKey(cfg.dataDir, c.passphrase)
  if (loaded.migrated)
    c.log.warn(
      { dataDir: cfg.dataDir },
      'node.key was a plain key file (dms 0.1): sealed it with the passphrase',
    )
  const key = loaded.key
  const relay = cfg.network?.relay
  const host = await createHost(
    key,
    {
      ...cfg.network,
      ...(relay?.serve === true
        ? { relay: { ...relay, contractDb: relayContractDb(relay.contractDb, cfg, key) } }
        : {}),
      listen: cfg.listen,
      bootstrap: cfg.bootstrap,
      oneHost: cfg.oneHost,
      roles: [...(cfg.roles ?? []), ...(cfg.network?.relay?.serve === true ? ['relay'] : [])],
      // Our validators judge bid requests and capacity news: one they reject lowers its sender's score.
      scoredTopics: [BID_REQUEST_TOPIC, CAPACITY_TOPIC],
    },
    child(c.log, 'dms:network'),
    c.clock,
    relayCredentialCheck(),
  )
  const net = cfg.network ?? {}
  const transport = new Libp2pTransport(
    { host, log: child(c.log, 'dms:network'), clock: c.clock },
    {
      maxFrameBytes: net.maxFrameBytes,
      frameReadTimeoutMs: net.frameReadTimeoutMs,
      maxUnfinishedBytesPerConnection: net.maxUnfinishedBytesPerConnection,
      maxUnfinishedBytes: net.maxUnfinishedBytes,
    },
  )
  const payloadRefusals: Record<string, Record<string, number>> = {}
  const refusalObservers = new Set<(behaviour: string, reason: string) => void>()
  const codecs = dmsCodecs((behaviour, reason) => {
    const by = (payloadRefusals[behaviour] ??= {})
    by[reason] = (by[reason] ?? 0) + 1
    for (const fn of refusalObservers) fn(behaviour, reason)
  })
  const system = new ActorSystem(
    { transport, clock: c.clock, log: child(c.log, 'actors'), codecs },
    { maxFrameBytes: cfg.network?.maxFrameBytes, mailbox: cfg.network?.mailbox, version: PROTOCOL_VERSION },
  )
  await host.start()
  lifecycle.onStop(() => host.stop(), 'host')
  await transport.start()
  lifecycle.onStop(() => transport.stop(), 'transport')
  const upkeep = startUpkeep(
    host,
    { clock: c.clock, log: child(c.log, 'dms:network') },
    {
      bootstrap: cfg.bootstrap,
      keeper: net.redial,
      dht: net.dht,
      provider: cfg.roles?.includes('provider') === true,
      pnet: net.pnet !== undefined,
    },
  )
  lifecycle.onStop(() => upkeep.stop(), 'network upkeep')
  lifecycle.onStop(() => system.stop(), 'actors')
  const onPayloadRefused = (fn: (behaviour: string, reason: string) => void) => {
    refusalObservers.add(fn)
    return () => refusalObservers.delete(fn)
  }
  return { db, key, host, transport, system, payloadRefusals, upkeep, onPayloadRefused }
}
