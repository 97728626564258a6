/**
 * The parts every node has, in start order: the peer base (data dir, database, key, host,
 * transport, actor system), the node-wide metrics, the blobs, the approval credentials and their
 * presentation to relays.
 */
import { join } from 'node:path'
import { Lifecycle } from '../../actors/lifecycle.js'
import { BlobService } from '../blobs/service.js'
import { BlobStore } from '../blobs/store.js'
import { startBlobActor } from '../blobs/transfer.js'
import { ApprovalClient } from '../contract-clients/approval-client.js'
import { presentedCredential } from '../contract-clients/relay-credentials.js'
import type { NodeConfig } from '../config.js'
import { child } from '../log.js'
import { ApprovalPresenter } from '../network/relay/present.js'
import { nodeMetrics } from '../node-metrics.js'
import { startPeerBase } from '../peer-base.js'
import { need, partOf, type NodePartFactory } from './components.js'

/** Data dir, database, key, host, transport and actor system (peer-base.ts), stopped in reverse. */
export const peerBasePart: NodePartFactory = (c) => {
  const cfg = c.config
  const roles = [
    ...(cfg.requester !== undefined ? ['requester'] : []),
    ...(cfg.provider !== undefined ? ['provider'] : []),
  ]
  const inner = new Lifecycle((err, part) => c.log.warn({ err, part }, 'error while stopping'))
  const provides: Partial<typeof c> = {}
  return {
    name: 'peer base',
    provides,
    start: () =>
      inner.start(async () => {
        const base = await startPeerBase(
          { ...cfg, roles, contractDb: cfg.provider?.contractDb ?? cfg.requester?.contractDb.peer },
          { clock: c.clock, log: c.log, passphrase: c.passphrase },
          inner,
        )
        Object.assign(provides, base)
      }),
    stop: () => inner.stop(),
  }
}

/** The node-wide metrics: the actor system's receive events, decode refusals, the process guard. */
export const metricsPart: NodePartFactory = (c) => {
  const { host, transport, system, payloadRefusals, onPayloadRefused } = need(
    c,
    'host',
    'transport',
    'system',
    'payloadRefusals',
    'onPayloadRefused',
  )
  const fed = nodeMetrics(
    { host, transport, system, payloadRefusals, onPayloadRefused },
    c.approvals,
    c.faults,
  )
  return partOf('metrics', { start: () => undefined, stop: () => fed.stop() }, { metrics: fed.metrics })
}

/** The data plane: content-addressed blobs (job inputs, output archives), served to granted peers. */
export const blobsPart: NodePartFactory = (c) => {
  const { db, system, key, clock, log } = need(c, 'db', 'system', 'key')
  const store = new BlobStore({ dir: join(c.config.dataDir, 'blobs') })
  const blobs = new BlobService({
    store,
    db,
    log: child(log, 'dms:blobs'),
    now: () => clock.now(),
    // A grantee's release never deletes what a job of this node uses (its inputs, its outputs).
    inUse: async (sha) => ((await c.orchestrator?.store.index.blobUsers(sha)) ?? 0) > 0,
    // A provider keeps an unsettled contract's archive until the settlement, released or not.
    deferRelease: async (r) => (await c.provider?.archives.deferred(r)) === true,
  })
  let actor: { stop(): void } | undefined
  return partOf(
    'blobs',
    {
      start: async () => {
        await store.start()
        actor = startBlobActor(system, key, blobs)
      },
      stop: () => actor?.stop(),
    },
    { blobs },
  )
}

/**
 * The provider's contract-db addresses: `provider.contractDbAddrs`, else the requester's when it
 * names the same contract-db, else the bootstrap entries that end in its peer id.
 */
export function contractDbAddrsOf(cfg: NodeConfig): string[] {
  const p = cfg.provider
  if (p === undefined) return []
  if (p.contractDbAddrs !== undefined) return p.contractDbAddrs
  if (cfg.requester?.contractDb.peer === p.contractDb) return cfg.requester.contractDb.addrs
  return (cfg.bootstrap ?? []).filter((a) => a.endsWith(`/p2p/${p.contractDb}`))
}

/** Each contract-db named by a role: its approval credential, asked for in the background. */
export const approvalsPart: NodePartFactory = (c) => {
  const cfg = c.config
  const { system, db, clock, log } = need(c, 'system', 'db')
  const cdbs = new Map<string, string[]>()
  if (cfg.requester !== undefined) cdbs.set(cfg.requester.contractDb.peer, cfg.requester.contractDb.addrs)
  if (cfg.provider !== undefined && !cdbs.has(cfg.provider.contractDb))
    cdbs.set(cfg.provider.contractDb, contractDbAddrsOf(cfg))
  const inner = new Lifecycle((err, part) => log.warn({ err, part }, 'error while stopping'))
  return {
    name: 'approval',
    start: () =>
      inner.start(async () => {
        for (const [peer, addrs] of cdbs) {
          const client = new ApprovalClient(
            { system, db, clock, log: child(log, 'dms:approval') },
            { contractDb: { peer, addrs } },
          )
          await client.start()
          inner.onStop(() => client.stop(), 'approval')
          c.approvals.set(peer, client)
        }
      }),
    stop: () => inner.stop(),
  }
}

/** Relays serve approved peers only: each is shown this node's credentials (and each renewal). */
export const relayApprovalPart: NodePartFactory = (c) => {
  if (c.approvals.size === 0) return undefined
  const { host, clock, log } = need(c, 'host')
  const presenter = new ApprovalPresenter(
    {
      host,
      clock,
      log: child(log, 'dms:network'),
      credentials: () => [...c.approvals.values()].flatMap((a) => a.current() ?? []).map(presentedCredential),
    },
    { reserve: c.config.network?.relay?.reserve === true },
  )
  for (const a of c.approvals.values()) a.events.on('renewed', () => presenter.renewed())
  return partOf('relay approval', presenter)
}
