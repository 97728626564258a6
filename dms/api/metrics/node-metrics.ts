/**
 * `GET /metrics`: the node's metrics (prom-client, Prometheus text 0.0.4), counted at events: the
 * composition root (dms/node-adapters.ts) calls `rejected`, `payloadRefused`, ... as things happen
 * and each role's metrics with each stored change. A scrape reads counters and a few numbers kept
 * in memory (connections, actors, the ledger's sums), never the database; then the process's
 * runtime metrics (dms/metrics/runtime.ts). Names, labels and meanings: specs/rest-api.md, "Metrics".
 */
import { Counter, Gauge, Registry } from 'prom-client'
import type { MetricsPort } from '../ports.js'
import { readGauge, seed, type Counts } from '../../metrics/counts.js'
import { renderWithRuntime } from '../../metrics/runtime.js'
import { ProviderMetrics, type ProviderSources } from './provider-metrics.js'
import { RequesterMetrics, type RequesterSources } from './requester-metrics.js'

/** What the node-wide gauges read at a scrape (all in memory). */
export interface NodeSources {
  /** Distinct peers with an open connection. */
  connectedPeers(): number
  /** Live subscribers of the bid request topic (connected, with an open gossip stream). */
  bidTopicPeers(): number
  /** Connected peers whose gossip score is below the graylist threshold. */
  graylistedPeers(): number
  actors(): number
  pendingRequests(): number
  /** Envelopes delivered to an actor so far (the actor system counts them as it delivers). */
  delivered(): number
  /** This node's approval credential from each contract-db it uses: valid now, or not. */
  approvals(): Array<{ contractDb: string; valid: boolean }>
}

export class NodeMetrics implements MetricsPort {
  readonly registry = new Registry()
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE
  private readonly rejections: Counter<'reason'>
  private readonly lateArrivals: Counter<'reason'>
  private readonly payloadsRefused: Counter<'behaviour' | 'reason'>
  private readonly faults: Counter<'kind'>

  constructor(sources: NodeSources) {
    const registers = [this.registry]
    readGauge(this.registry, 'dms_peers_connected', 'libp2p peers with an open connection', () =>
      sources.connectedPeers(),
    )
    new Counter({
      name: 'dms_actor_delivered_total',
      help: 'envelopes delivered to an actor',
      registers,
      collect() {
        this.reset()
        this.inc(sources.delivered())
      },
    })
    this.rejections = new Counter({
      name: 'dms_actor_rejections_total',
      help: 'inbound frames refused by the receive pipeline, by reason (specs/protocol.md)',
      labelNames: ['reason'],
      registers,
    })
    this.lateArrivals = new Counter({
      name: 'dms_actor_late_total',
      help: 'valid messages that arrived after their inbox closed or their request timed out',
      labelNames: ['reason'],
      registers,
    })
    this.payloadsRefused = new Counter({
      name: 'dms_payloads_refused_total',
      help: 'payloads refused at decode (each also counted as the rejection bad_payload), by behaviour and reason: too_long, bad_shape, bad_wire, bad_json (specs/protocol.md, "Bounds")',
      labelNames: ['behaviour', 'reason'],
      registers,
    })
    new Gauge({
      name: 'dms_approval_valid',
      help: 'whether this node holds a valid approval credential from the contract-db (1) or not (0)',
      labelNames: ['contract_db'],
      registers,
      collect() {
        this.reset()
        for (const a of sources.approvals()) this.set({ contract_db: a.contractDb }, a.valid ? 1 : 0)
      },
    })
    readGauge(this.registry, 'dms_actors', 'live actors', () => sources.actors())
    this.faults = new Counter({
      name: 'dms_process_faults_total',
      help: 'errors thrown outside any call (uncaughtException, unhandledRejection) caught by the process guard; the node kept serving (specs/protocol.md)',
      labelNames: ['kind'],
      registers,
    })
    readGauge(this.registry, 'dms_actor_pending_requests', 'requests waiting for a reply', () =>
      sources.pendingRequests(),
    )
    readGauge(
      this.registry,
      'dms_bid_topic_peers',
      'live subscribers of the bid request topic (providers and relays)',
      () => sources.bidTopicPeers(),
    )
    readGauge(
      this.registry,
      'dms_gossip_graylisted_peers',
      'connected peers whose gossip score is below the graylist threshold (their gossip is dropped)',
      () => sources.graylistedPeers(),
    )
  }

  /** Counts kept before these metrics listened (the receive pipeline's, the decoders'). */
  seed(counts: {
    rejections?: Counts
    late?: Counts
    payloadsRefused?: Readonly<Record<string, Counts>>
    faults?: Counts
  }): void {
    seed(this.rejections, 'reason', counts.rejections ?? {})
    seed(this.lateArrivals, 'reason', counts.late ?? {})
    for (const [behaviour, by] of Object.entries(counts.payloadsRefused ?? {}))
      for (const [reason, n] of Object.entries(by))
        if (n !== undefined) this.payloadsRefused.inc({ behaviour, reason }, n)
    seed(this.faults, 'kind', counts.faults ?? {})
  }

  /** An inbound frame refused by the receive pipeline. */
  rejected(reason: string): void {
    this.rejections.inc({ reason })
  }

  /** A valid message after its inbox closed or its request timed out. */
  late(reason: string): void {
    this.lateArrivals.inc({ reason })
  }

  /** A payload refused at decode. */
  payloadRefused(behaviour: string, reason: string): void {
    this.payloadsRefused.inc({ behaviour, reason })
  }

  /** An error the process guard caught. */
  fault(kind: string): void {
    this.faults.inc({ kind })
  }

  /** The requester's families; feed them each stored change of a job. */
  requester(sources: RequesterSources): RequesterMetrics {
    return new RequesterMetrics(this.registry, sources)
  }

  /** The provider's families; feed them each stored change of an allocation. */
  provider(sources: ProviderSources): ProviderMetrics {
    return new ProviderMetrics(this.registry, sources)
  }

  /** The node's families, then the process's runtime ones (`process_*`, `nodejs_*`). */
  render(): Promise<string> {
    return renderWithRuntime(this.registry)
  }
}
