/**
 * `GET /metrics`: the node's counters and gauges in the Prometheus text exposition format
 * (version 0.0.4). Names and labels: specs/rest-api.md, "Metrics".
 */
import type { DmsNode } from '../node.js'

export interface MetricSample {
  labels?: Record<string, string>
  value: number
}

export interface MetricFamily {
  name: string
  help: string
  type: 'counter' | 'gauge'
  samples: MetricSample[]
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

const escapeLabel = (v: string) => v.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('"', '\\"')
const escapeHelp = (v: string) => v.replaceAll('\\', '\\\\').replaceAll('\n', '\\n')
const num = (v: number) =>
  Number.isNaN(v) ? 'NaN' : v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : String(v)

/** Renders families as Prometheus text; a family with no samples still gets its HELP and TYPE. */
export function renderPrometheus(families: MetricFamily[]): string {
  const out: string[] = []
  for (const f of families) {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(f.name)) throw new Error(`bad metric name ${f.name}`)
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`)
    for (const s of f.samples) {
      const labels = Object.entries(s.labels ?? {})
      const l = labels.length === 0 ? '' : `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`
      out.push(`${f.name}${l} ${num(s.value)}`)
    }
  }
  return `${out.join('\n')}\n`
}

const byLabel = (label: string, counts: Record<string, number | undefined>): MetricSample[] =>
  Object.entries(counts)
    .filter((e): e is [string, number] => e[1] !== undefined)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, value]) => ({ labels: { [label]: k }, value }))

const DIMS = ['cpu', 'memoryBytes', 'diskBytes', 'gpus'] as const

/** Every metric of a running node: network, actor system, requester jobs and provider ledger. */
export async function collectNodeMetrics(node: DmsNode): Promise<MetricFamily[]> {
  const m = node.system.metrics()
  const families: MetricFamily[] = [
    {
      name: 'dms_peers_connected',
      help: 'libp2p peers with an open connection',
      type: 'gauge',
      samples: [{ value: new Set(node.host.getConnections().map((c) => c.remotePeer.toString())).size }],
    },
    {
      name: 'dms_actor_delivered_total',
      help: 'envelopes delivered to an actor',
      type: 'counter',
      samples: [{ value: m.delivered }],
    },
    {
      name: 'dms_actor_rejections_total',
      help: 'inbound frames refused by the receive pipeline, by reason (specs/protocol.md)',
      type: 'counter',
      samples: byLabel('reason', m.rejections),
    },
    {
      name: 'dms_actor_late_total',
      help: 'valid messages that arrived after their inbox closed or their request timed out',
      type: 'counter',
      samples: byLabel('reason', m.late),
    },
    {
      name: 'dms_payloads_refused_total',
      help: 'payloads refused at decode (each also counted as the rejection bad_payload), by behaviour and reason: too_long, bad_shape, bad_wire, bad_json (specs/protocol.md, "Bounds")',
      type: 'counter',
      samples: Object.entries(node.payloadRefusals)
        .sort(([a], [b]) => a.localeCompare(b))
        .flatMap(([behaviour, by]) =>
          byLabel('reason', by).map((x) => ({ ...x, labels: { behaviour, ...x.labels } })),
        ),
    },
    {
      name: 'dms_approval_valid',
      help: 'whether this node holds a valid approval credential from the contract-db (1) or not (0)',
      type: 'gauge',
      samples: [...node.approvals.values()].map((a) => ({
        labels: { contract_db: a.contractDb },
        value: a.current() === undefined ? 0 : 1,
      })),
    },
    { name: 'dms_actors', help: 'live actors', type: 'gauge', samples: [{ value: m.actors }] },
    {
      name: 'dms_process_faults_total',
      help: 'errors thrown outside any call (uncaughtException, unhandledRejection) caught by the process guard; the node kept serving (specs/protocol.md)',
      type: 'counter',
      samples: node.faults === undefined ? [] : byLabel('kind', node.faults.counts()),
    },
    {
      name: 'dms_actor_pending_requests',
      help: 'requests waiting for a reply',
      type: 'gauge',
      samples: [{ value: m.pendingRequests }],
    },
  ]
  if (node.orchestrator !== undefined) {
    const jobs = await node.orchestrator.list()
    const states: Record<string, number> = {}
    let escrow = 0
    let paid = 0
    let refunded = 0
    for (const j of jobs) {
      states[j.state] = (states[j.state] ?? 0) + 1
      const r = j.record
      if (r.contract !== undefined && r.proof !== undefined) escrow += r.proof.escrowLocked
      if (r.settlement !== undefined) {
        paid += r.settlement.paidToProvider
        refunded += r.settlement.refundedToRequester
      }
    }
    families.push(
      {
        name: 'dms_jobs',
        help: "requester jobs by state (stored state; 'selecting' is transient and never stored)",
        type: 'gauge',
        samples: byLabel('state', states),
      },
      {
        name: 'dms_requester_bids_ignored_total',
        help: 'bids not ranked, by reason: no or bad approval credential, another job, unsigned, other terms... (specs/protocol.md)',
        type: 'counter',
        samples: byLabel('reason', node.orchestrator.bidsIgnored),
      },
      {
        name: 'dms_requester_declines_ignored_total',
        help: 'declines not kept, by reason (as for bids)',
        type: 'counter',
        samples: byLabel('reason', node.orchestrator.declinesIgnored),
      },
      {
        name: 'dms_requester_escrow_locked_total',
        help: 'escrow the contract-db locked for this requester, summed over its contracts (micro-tokens)',
        type: 'counter',
        samples: [{ value: escrow }],
      },
      {
        name: 'dms_requester_paid_total',
        help: 'paid to providers at settlement (micro-tokens)',
        type: 'counter',
        samples: [{ value: paid }],
      },
      {
        name: 'dms_requester_refunded_total',
        help: 'refunded to this requester at settlement (micro-tokens)',
        type: 'counter',
        samples: [{ value: refunded }],
      },
    )
  }
  if (node.provider !== undefined && node.ledger !== undefined) {
    const s = node.ledger.summary()
    const resources: MetricSample[] = []
    for (const kind of ['offer', 'reserved', 'locked', 'allocated', 'free'] as const)
      for (const dim of DIMS) resources.push({ labels: { kind, resource: dim }, value: s[kind][dim] })
    const allocs: Record<string, number> = {}
    for (const a of await node.provider.allocations.repo.values())
      allocs[a.state] = (allocs[a.state] ?? 0) + 1
    families.push(
      {
        name: 'dms_provider_resources',
        help: 'provider ledger: offered, reserved, locked, allocated and free resources (cpu in cores, sizes in bytes)',
        type: 'gauge',
        samples: resources,
      },
      {
        name: 'dms_provider_declines_total',
        help: 'bid requests declined, by reason',
        type: 'counter',
        samples: byLabel('reason', node.provider.declines),
      },
      {
        name: 'dms_provider_bid_requests_ignored_total',
        help: 'bid requests dropped without an answer, by reason: rate_limited, no or bad approval credential of the requester, not_approved_here, malformed, past_deadline',
        type: 'counter',
        samples: byLabel('reason', node.provider.bidRequestsIgnored),
      },
      {
        name: 'dms_allocations',
        help: 'provider allocations by state',
        type: 'gauge',
        samples: byLabel('state', allocs),
      },
    )
  }
  return families
}
