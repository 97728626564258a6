/**
 * `GET /metrics` with prom-client, counted at events: today's names and labels in the 0.0.4 text
 * format, counts that follow events (not a read of the store), and a scrape that never reads the
 * jobs store.
 */
import assert from 'node:assert/strict'
import { NodeMetrics, type NodeSources } from '../../../dms/api/metrics/node-metrics.js'
import { detachedPorts } from '../../../dms/api/null-ports.js'
import type { JobView } from '../../../dms/api/ports.js'
import { buildApi } from '../../../dms/api/server.js'
import { silentLogger } from '../../../dms/log.js'
import { requesterMetrics } from '../../../dms/node-metrics.js'
import type { JobRecord } from '../../../dms/orchestrator/job-record.js'
import type { Orchestrator } from '../../../dms/orchestrator/orchestrator.js'

const sources = (over: Partial<NodeSources> = {}): NodeSources => ({
  connectedPeers: () => 2,
  bidTopicPeers: () => 1,
  graylistedPeers: () => 0,
  actors: () => 5,
  pendingRequests: () => 0,
  delivered: () => 42,
  approvals: () => [{ contractDb: 'CDB', valid: true }],
  ...over,
})

/** The node's own sample lines of `text` (no HELP, TYPE, blank or runtime lines). */
const samples = (text: string) => text.split('\n').filter((l) => l.startsWith('dms_'))

const job = (id: string, state: string, extra: Partial<JobRecord> = {}): JobView => ({
  state,
  record: {
    id,
    spec: {},
    createdAt: 1000,
    history: [{ state, at: 61_000 }],
    bids: [],
    declines: [],
    tried: [],
    updates: [],
    ...extra,
  } as unknown as JobRecord,
})
const proof = (contractId: string, escrowLocked: number) =>
  ({ contractId, escrowLocked }) as JobRecord['proof']
const settlement = (contractId: string, paid: number, refunded: number) =>
  ({ contractId, paidToProvider: paid, refundedToRequester: refunded }) as JobRecord['settlement']

/** An orchestrator as the metrics see it: change listeners and a store that counts its reads. */
class FakeOrchestrator {
  readonly bidsIgnored: Record<string, number> = { no_approval: 2 }
  readonly declinesIgnored: Record<string, number> = {}
  reads = 0
  private readonly listeners = new Set<(j: JobView) => void>()
  constructor(private readonly stored: JobView[]) {}
  onChange(fn: (j: JobView) => void) {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }
  list(): Promise<JobView[]> {
    this.reads++
    if (this.reads > 1) return Promise.reject(new Error('the jobs store was read again'))
    return Promise.resolve(this.stored)
  }
  emit(j: JobView) {
    for (const fn of this.listeners) fn(j)
  }
  /** The running jobs' usage so far, summed (from memory). */
  liveUsageTotals() {
    return { cpuSeconds: 1.5, memoryBytes: 2048 }
  }
}

describe('metrics (prom-client, counted at events)', () => {
  it("renders today's families, names and labels in the Prometheus text format 0.0.4", async () => {
    const m = new NodeMetrics(sources())
    m.seed({
      rejections: { bad_signature: 3 },
      late: {},
      payloadsRefused: { '/dms/job/bid': { too_long: 1 } },
      faults: { uncaughtException: 0, unhandledRejection: 0 },
    })
    m.rejected('expired')
    m.late('inbox_closed')
    m.payloadRefused('/dms/job/bid', 'too_long')
    m.payloadRefused('a"b\\c\nd', 'bad_json')
    m.fault('unhandledRejection')
    assert.equal(m.contentType, 'text/plain; version=0.0.4; charset=utf-8')
    const text = await m.render()
    assert.match(text, /^# HELP dms_actor_rejections_total inbound frames refused/m)
    assert.match(text, /^# TYPE dms_actor_rejections_total counter$/m)
    assert.deepEqual(samples(text), [
      'dms_peers_connected 2',
      'dms_actor_delivered_total 42',
      'dms_actor_rejections_total{reason="bad_signature"} 3',
      'dms_actor_rejections_total{reason="expired"} 1',
      'dms_actor_late_total{reason="inbox_closed"} 1',
      'dms_payloads_refused_total{behaviour="/dms/job/bid",reason="too_long"} 2',
      // A label value from a peer is escaped, never able to break the format.
      'dms_payloads_refused_total{behaviour="a\\"b\\\\c\\nd",reason="bad_json"} 1',
      'dms_approval_valid{contract_db="CDB"} 1',
      'dms_actors 5',
      'dms_process_faults_total{kind="uncaughtException"} 0',
      'dms_process_faults_total{kind="unhandledRejection"} 1',
      'dms_actor_pending_requests 0',
      'dms_bid_topic_peers 1',
      'dms_gossip_graylisted_peers 0',
    ])
  })

  it("then the process's runtime metrics: memory, CPU, event loop lag, GC, one family each", async () => {
    const text = await new NodeMetrics(sources()).render()
    assert.ok(text.indexOf('dms_gossip_graylisted_peers') < text.indexOf('process_cpu_seconds_total'))
    for (const family of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_open_fds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_gc_duration_seconds',
    ])
      assert.equal(text.split('\n').filter((l) => l.startsWith(`# TYPE ${family} `)).length, 1, family)
    // Gauges prom-client names like counters, which promtool refuses, are left out.
    assert.doesNotMatch(text, /^# TYPE nodejs_active_\w+_total /m)
  })

  it('requester: jobs by state, escrow, payments and durations follow each stored change, once', async () => {
    const m = new NodeMetrics(sources())
    const o = new FakeOrchestrator([job('old', 'completed', { settlement: settlement('c0', 5, 1) })])
    const feed = requesterMetrics(m, o as unknown as Orchestrator)
    await feed.scan()
    o.emit(job('j', 'bidding'))
    o.emit(job('j', 'running', { proof: proof('c1', 100) }))
    // A provider fault: the contract was terminated, the job bids again and gets another one.
    const attempts = [{ settlement: settlement('c1', 10, 90) }] as JobRecord['attempts']
    o.emit(job('j', 'bidding', { attempts }))
    o.emit(job('j', 'running', { attempts, proof: proof('c2', 100) }))
    const done = job('j', 'completed', {
      attempts,
      proof: proof('c2', 100),
      settlement: settlement('c2', 30, 70),
    })
    o.emit(done)
    o.emit(done) // stored again after it ended: counts nothing more
    const text = await m.render()
    const lines = samples(text)
    for (const line of [
      'dms_jobs{state="completed"} 2',
      'dms_jobs{state="bidding"} 0',
      'dms_jobs{state="running"} 0',
      'dms_requester_bids_ignored_total{reason="no_approval"} 2',
      'dms_requester_escrow_locked_total 200',
      'dms_requester_paid_total 45',
      'dms_requester_refunded_total 161',
      'dms_job_duration_seconds_count{outcome="completed"} 1',
      'dms_job_duration_seconds_sum{outcome="completed"} 60',
    ])
      assert.ok(lines.includes(line), `${line} not in\n${text}`)
    feed.stop()
    o.emit(job('k', 'bidding'))
    assert.ok(samples(await m.render()).includes('dms_jobs{state="bidding"} 0'), 'unsubscribed at stop')
  })

  it('a scrape never reads the jobs store: GET /metrics answers while list() throws', async () => {
    const m = new NodeMetrics(sources())
    const o = new FakeOrchestrator([job('a', 'failed'), job('b', 'running')])
    const feed = requesterMetrics(m, o as unknown as Orchestrator)
    await feed.scan() // the one read, at start
    const jobs = { ...detachedPorts().jobs, list: async () => ({ jobs: await o.list() }) }
    const { app } = buildApi({ ...detachedPorts(), jobs, metrics: m }, { log: silentLogger })
    o.emit(job('b', 'completed'))
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({ method: 'GET', url: '/metrics' })
      assert.equal(res.statusCode, 200)
      assert.match(res.body, /^dms_jobs\{state="completed"\} 1$/m)
      assert.match(res.body, /^dms_jobs\{state="failed"\} 1$/m)
      assert.match(res.body, /^dms_jobs\{state="running"\} 0$/m)
      assert.match(res.body, /^dms_jobs_running_cpu_seconds 1.5$/m, 'live usage, from memory')
    }
    // The store, read again, throws: GET /v1/jobs (which does read it) fails; the scrapes did not.
    assert.equal((await app.inject({ method: 'GET', url: '/v1/jobs' })).statusCode, 500)
    assert.equal(o.reads, 2)
    await app.close()
  })
})
