/**
 * The node's metrics, fed at events: node-wide (the actor system's receive events, the decoders'
 * refusals, the process guard) and per role (the requester's job changes, the provider's
 * allocation events). The node's parts (dms/parts/) start and stop them.
 */
import { NodeMetrics } from './api/metrics/node-metrics.js'
import type { ApprovalClient } from './contract-clients/approval-client.js'
import type { Host } from './network/host.js'
import type { Orchestrator } from './orchestrator/orchestrator.js'
import { FINAL_STATES } from './orchestrator/job-store.js'
import type { PeerBase } from './peer-base.js'
import type { ProcessFaults } from './process-guard.js'
import { BID_REQUEST_TOPIC } from './protocol/handles.js'
import type { ProviderService } from './provider/provider.js'
import type { ResourceLedger } from './resources/ledger.js'

/** Distinct peers of the open connections. */
const connectedPeers = (host: Host) => new Set(host.getConnections().map((c) => c.remotePeer.toString()))

/**
 * The node-wide metrics, fed by the actor system's receive events, the decoders' refusals and
 * the process guard (each seeded with what it counted before). `stop` unsubscribes.
 */
export function nodeMetrics(
  base: Pick<PeerBase, 'host' | 'transport' | 'system' | 'payloadRefusals' | 'onPayloadRefused'>,
  approvals: ReadonlyMap<string, ApprovalClient>,
  faults?: ProcessFaults,
): { metrics: NodeMetrics; stop: () => void } {
  const { host, transport, system } = base
  const metrics = new NodeMetrics({
    connectedPeers: () => connectedPeers(host).size,
    bidTopicPeers: () => transport.topicPeers(BID_REQUEST_TOPIC),
    graylistedPeers: () => [...connectedPeers(host)].filter((p) => transport.graylisted(p)).length,
    actors: () => system.metrics().actors,
    pendingRequests: () => system.metrics().pendingRequests,
    delivered: () => system.metrics().delivered,
    approvals: () =>
      [...approvals.values()].map((a) => ({ contractDb: a.contractDb, valid: a.current() !== undefined })),
  })
  // Seeded and subscribed in one turn: nothing counted in between is lost or counted twice.
  metrics.seed({
    rejections: system.rejections,
    late: system.late,
    payloadsRefused: base.payloadRefusals,
    faults: faults?.counts(),
  })
  const offs = [
    system.observe((e) => (e.kind === 'rejected' ? metrics.rejected(e.reason) : metrics.late(e.reason))),
    base.onPayloadRefused((behaviour, reason) => metrics.payloadRefused(behaviour, reason)),
    faults?.observe((kind) => metrics.fault(kind)) ?? (() => {}),
  ]
  return { metrics, stop: () => offs.forEach((off) => off()) }
}

/** How a role's metrics follow it: subscribed now; `scan` reads the store once, after its start. */
export interface MetricsFeed {
  scan(): Promise<void>
  stop(): void
}

/** The requester's metrics: each stored change of a job (the orchestrator's change listener). */
export function requesterMetrics(metrics: NodeMetrics, o: Orchestrator): MetricsFeed {
  const m = metrics.requester({
    bidsIgnored: () => o.bidsIgnored,
    declinesIgnored: () => o.declinesIgnored,
    finalStates: FINAL_STATES,
    liveUsage: () => o.liveUsageTotals(),
  })
  const off = o.onChange((job) => m.job(job))
  return { scan: () => m.scan(() => o.list()), stop: off }
}

/** Where the provider stores its allocations (dms/provider/allocation.ts), and their last state. */
const ALLOCATION_FINAL = ['released']

/**
 * The provider's metrics: each allocation as the provider stores it (its `allocation` event), each
 * bid request it drops (its `bid-request-ignored` event), its ledger's sums and declines.
 */
export function providerMetrics(
  metrics: NodeMetrics,
  p: ProviderService,
  ledger: ResourceLedger,
): MetricsFeed {
  const m = metrics.provider({
    resources: () => ledger.summary(),
    declines: () => p.declines,
    finalStates: ALLOCATION_FINAL,
    books: () => p.books.summary(),
    mode: () => p.modes.view().mode,
  })
  m.seed(p.bidRequestsIgnored)
  const onIgnored = (reason: string) => m.bidRequestIgnored(reason)
  p.events.on('bid-request-ignored', onIgnored)
  // A pruned record (state undefined) is final already and counts on.
  const onAllocation = (id: string, state: string | undefined) => m.allocation(id, state)
  p.events.on('allocation', onAllocation)
  return {
    scan: () =>
      m.scan(async () => (await p.listAllocations()).map((a) => ({ id: a.ledgerId, state: a.state }))),
    stop: () => {
      p.events.off('allocation', onAllocation)
      p.events.off('bid-request-ignored', onIgnored)
    },
  }
}
