/**
 * The composition root's thin adapters: the REST API's ports (dms/api/ports.ts) over the node's
 * parts. The one place that knows both the API and the parts' own interfaces: a change inside
 * the orchestrator, the provider or the network changes an adapter here, never a route.
 */
import type { ActorSystem } from '../actors/system.js'
import {
  noAllocations,
  noFunctions,
  noJobs,
  noMode,
  noQueues,
  noResources,
  noWorkflows,
  NotARequesterError,
} from './api/null-ports.js'
import { DMS_VERSION } from './api/openapi.js'
import type {
  AllocationsPort,
  ApiPorts,
  BlobsPort,
  FunctionsPort,
  InfoPort,
  JobsPort,
  MetricsPort,
  NodeModePort,
  PeersPort,
  QueuesPort,
  TopicsPort,
} from './api/ports.js'
import type { AllocationSummary, PeerSummary, TopicsReply } from './api/schemas.js'
import { peerViews } from './network/peer-info.js'
import type { BlobService } from './blobs/service.js'
import type { BlobUploads } from './blobs/uploads.js'
import type { ApprovalClient } from './contract-clients/approval-client.js'
import type { Functions } from './functions/functions.js'
import { TERMINATION } from './contracts/model.js'
import type { Host } from './network/host.js'
import type { Libp2pTransport } from './network/transport.js'
import { locateOutputFile } from './orchestrator/data-plane.js'
import { parseJobSpec } from './orchestrator/job-spec.js'
import type { Orchestrator } from './orchestrator/orchestrator.js'
import type { QueueBook } from './orchestrator/queues/queue-book.js'
import type { WorkflowJobs, WorkflowRunner } from './workflows/runner.js'
import { KeptOutputs, type KeptOutputsDeps } from './orchestrator/kept-outputs.js'
import { BID_REQUEST_TOPIC, CAPACITY_TOPIC } from './protocol/handles.js'
import { costSoFar } from './provider/billing.js'
import type { BookEntry } from './provider/books.js'
import type { ProviderService } from './provider/provider.js'
import type { Onboarding } from './resources/onboarding.js'
import type { EngineCapabilities } from './workload/capabilities.js'
import { checkOptionalTopic, DMS_TOPICS } from './protocol/topics.js'
import type { CapacityNewsListener } from './orchestrator/capacity-news.js'

/** The node's parts the API's ports are made from (a role's part is absent when it has no role). */
export interface ApiParts {
  peerId: string
  addrs(): string[]
  host: Host
  transport: Libp2pTransport
  system: ActorSystem
  blobs: BlobService
  /** `PUT /v1/blobs` into `blobs`' store, with its idle timeout and temp-bytes budget. */
  uploads: BlobUploads
  approvals: ReadonlyMap<string, ApprovalClient>
  payloadRefusals: Record<string, Record<string, number>>
  metrics: MetricsPort
  orchestrator?: Orchestrator
  queues?: QueueBook
  workflows?: WorkflowRunner
  functions?: Functions
  provider?: ProviderService
  /** The provider's engines as last measured (undefined before the first measurement). */
  engines?: () => EngineCapabilities[] | undefined
  /** Stops the node (`dms drain --stop`, once drained). */
  requestStop: () => void
  onboarding?: Onboarding
}

/**
 * The requester's jobs: the orchestrator, with the job spec checked on the way in and a job that
 * names a queue admitted by it first (404 or 409 when it takes no jobs; its `maxRetries` is the
 * default of `retries`).
 */
export const jobsPort = (o: Orchestrator, queues: QueueBook): JobsPort => ({
  post: (body) => {
    const spec = parseJobSpec(body, o.now())
    queues.admitJob(spec, (body as { retries?: unknown }).retries !== undefined)
    return o.post(spec)
  },
  quote: (body) => o.quote(parseJobSpec(body, o.now())),
  list: (q) => o.page(q),
  rerun: async (id) => {
    const old = await o.get(id)
    return o.rerun(id, queues.rerunInto(old?.record.spec.queue))
  },
  get: (id) => o.get(id),
  prune: (policy) => o.prune(policy),
  cancel: (id) => o.cancel(id),
  liveLogs: (id, member) => o.liveLogs(id, member),
  onLog: (fn) => o.onLog(fn),
  onChange: (fn) => o.onChange(fn),
})

/** The orchestrator as the workflows use it: tasks posted under their derived job ids. */
export function workflowJobsPort(o: Orchestrator, deps: Omit<KeptOutputsDeps, 'get'>): WorkflowJobs {
  const kept = new KeptOutputs({ ...deps, get: (j) => o.get(j) })
  return {
    post: (spec, id) => o.post(spec, { id }),
    get: (id) => o.get(id),
    cancel: (id) => o.cancel(id),
    onChange: (fn) => o.onChange(fn),
    outputs: (id) => kept.fetch(id),
    release: (id) => kept.release(id),
  }
}

/** The requester's workers, function table and actions. */
export const functionsPort = (f: Functions): FunctionsPort => ({
  registerWorker: (body) => f.workers.register(body),
  workers: () => Promise.resolve(f.workers.list()),
  functions: () => Promise.resolve(f.workers.functions()),
  postActions: (body) => f.actions.post(body),
  action: (id) => f.actions.get(id),
})

/** The requester's queues. */
export const queuesPort = (b: QueueBook): QueuesPort => ({
  create: (body) => b.create(body),
  list: () => Promise.resolve(b.list()),
  get: (id) => Promise.resolve(b.get(id)),
  drain: (id) => b.drain(id),
  cancel: (id) => b.cancel(id),
})

/** The provider's lifecycle mode; `drain` with `stop` asks the node to stop once drained. */
export const nodeModePort = (p: ProviderService, requestStop: () => void): NodeModePort => ({
  view: () => Promise.resolve(p.modes.view()),
  pause: () => p.modes.pause(),
  resume: () => p.modes.resume(),
  drain: async ({ stop }) => {
    const v = await p.drain()
    if (stop === true) void p.modes.drained().then(requestStop)
    return v
  },
})

/**
 * The provider's allocations, as stored; a running one with its usage so far and what that time
 * costs at the contract's price (the settlement bills wall time, specs/contract-db.md), an ended
 * one with the usage its receipt stated.
 */
export const allocationsPort = (p: ProviderService): AllocationsPort => ({
  list: async () => {
    const books = new Map((await p.books.list()).map((e) => [e.contractId, e]))
    return (await p.listAllocations()).map((a) => {
      const e = books.get(a.contract.terms.contractId)
      const live = p.usage.get(a.allocationId)
      // Once it ran: the usage its receipt states (memory is the peak).
      const ran = a.result?.usage
      const t = a.contract.terms
      return {
        allocationId: a.allocationId,
        jobId: a.jobId,
        contractId: t.contractId,
        requester: a.requester.peer,
        state: a.state,
        history: a.history,
        result: a.result,
        ...(e !== undefined ? { payment: paymentOf(e) } : {}),
        ...(live !== undefined
          ? { usage: live, costSoFar: costSoFar(t, live.wallSeconds) }
          : ran !== undefined
            ? {
                usage: {
                  cpuSeconds: ran.cpuSeconds,
                  memoryBytes: ran.peakMemoryBytes,
                  wallSeconds: ran.wallSeconds,
                },
              }
            : {}),
      }
    })
  },
  earnings: () => p.books.summary(),
  // Each allocation as the provider stores it (a pruned one is not a change a client is shown).
  onChange: (fn: (id: string, state: string) => void) => {
    const on = (id: string, state: string | undefined) => {
      if (state !== undefined) fn(id, state)
    }
    p.events.on('allocation', on)
    return () => void p.events.off('allocation', on)
  },
})

/** How an allocation's contract was paid, from the provider's books. */
function paymentOf(e: BookEntry): NonNullable<AllocationSummary['payment']> {
  const s = e.settlement
  return {
    escrow: e.escrow,
    ...(e.settleBy !== undefined ? { settleBy: e.settleBy } : {}),
    status:
      s === undefined ? 'outstanding' : s.reason === TERMINATION.requesterSilent ? 'claimed' : 'settled',
    ...(s !== undefined
      ? { paid: s.paidToProvider, refunded: s.refundedToRequester, ...(s.reason ? { reason: s.reason } : {}) }
      : {}),
    ...(e.claimError !== undefined ? { claimError: e.claimError.message } : {}),
  }
}

export const blobsPort = (blobs: BlobService, uploads: BlobUploads): BlobsPort => ({
  maxBlobBytes: blobs.store.maxBlobBytes,
  put: (body, declared) => uploads.put(body, declared),
  read: async (sha256) => ((await blobs.store.has(sha256)) ? blobs.store.stream(sha256) : undefined),
  outputFile: (result, path) => locateOutputFile(blobs, result, path),
})

/** Connected peers: one entry per peer, with its gossip standing. */
export const peersPort = (host: Host, transport: Libp2pTransport): PeersPort => ({
  list: async () => {
    const bid = new Set(transport.topicSubscribers(BID_REQUEST_TOPIC))
    return (await peerViews(host)).map((p): PeerSummary => ({
      ...p,
      bidTopic: bid.has(p.peerId),
      gossipScore: transport.gossipScore(p.peerId) ?? 0,
      graylisted: transport.graylisted(p.peerId),
    }))
  },
  onChange: (fn) => {
    const on = (connected: boolean) => (evt: CustomEvent<{ toString(): string }>) =>
      fn(evt.detail.toString(), connected)
    const up = on(true)
    const down = on(false)
    host.addEventListener('peer:connect', up)
    host.addEventListener('peer:disconnect', down)
    return () => {
      host.removeEventListener('peer:connect', up)
      host.removeEventListener('peer:disconnect', down)
    }
  },
})

export const infoPort = (
  n: Omit<ApiParts, 'metrics' | 'blobs' | 'uploads' | 'host' | 'onboarding' | 'queues'>,
): InfoPort => ({
  info: () => ({
    peerId: n.peerId,
    version: DMS_VERSION,
    addrs: n.addrs(),
    roles: { requester: n.orchestrator !== undefined, provider: n.provider !== undefined },
    bidTopicPeers: n.transport.topicPeers(BID_REQUEST_TOPIC),
    rejections: n.system.rejections,
    late: n.system.late,
    approval: [...n.approvals.values()].map((a) => a.status()),
    payloadsRefused: n.payloadRefusals,
    ...(n.orchestrator !== undefined ? { bidsIgnored: n.orchestrator.bidsIgnored } : {}),
    ...(n.provider !== undefined
      ? { bidRequestsIgnored: n.provider.bidRequestsIgnored, declines: n.provider.declines }
      : {}),
    ...(n.engines?.() !== undefined ? { engines: n.engines() } : {}),
    topics: { subscribed: n.transport.subscribedTopics(), known: n.transport.knownTopics() },
    capacity: {
      ...(n.orchestrator !== undefined
        ? {
            queued: n.orchestrator.capacity.size,
            woken: n.orchestrator.capacity.woken,
            wokenByJoins: n.orchestrator.joins.woken,
            news: n.orchestrator.capacityNews.counts,
            unheeded: {
              ...n.orchestrator.capacity.unheeded,
              ...(n.orchestrator.joins.strangers > 0 ? { stranger: n.orchestrator.joins.strangers } : {}),
            },
          }
        : {}),
      ...(n.provider !== undefined ? { announced: n.provider.capacityNews.sent } : {}),
    },
    ...(n.provider !== undefined ? { mode: n.provider.modes.view() } : {}),
  }),
})

/**
 * The gossip topics (specs/queueing.md, "Topics"): a requester may leave or join capacity news;
 * every other name is refused before anything is done (dms/protocol/topics.ts).
 */
export function topicsPort(
  transport: Pick<Libp2pTransport, 'subscribedTopics' | 'knownTopics'>,
  capacityNews?: Pick<CapacityNewsListener, 'listen' | 'listening'>,
): TopicsPort {
  const view = (): TopicsReply => ({
    subscribed: transport.subscribedTopics(),
    known: transport.knownTopics(),
    optional:
      capacityNews === undefined
        ? []
        : [{ topic: CAPACITY_TOPIC, subscribed: capacityNews.listening, what: DMS_TOPICS[CAPACITY_TOPIC] }],
  })
  const choose = async (topic: string, on: boolean): Promise<TopicsReply> => {
    checkOptionalTopic(topic)
    if (capacityNews === undefined) throw new NotARequesterError()
    await capacityNews.listen(on)
    return view()
  }
  return {
    view: () => Promise.resolve(view()),
    subscribe: (topic) => choose(topic, true),
    unsubscribe: (topic) => choose(topic, false),
  }
}

/** Every port of the REST API; a role the node does not play is its null object (409). */
export function apiPorts(n: ApiParts): ApiPorts {
  return {
    info: infoPort(n),
    peers: peersPort(n.host, n.transport),
    topics: topicsPort(n.transport, n.orchestrator?.capacityNews),
    jobs:
      n.orchestrator !== undefined && n.queues !== undefined ? jobsPort(n.orchestrator, n.queues) : noJobs,
    queues: n.queues !== undefined ? queuesPort(n.queues) : noQueues,
    workflows: n.workflows ?? noWorkflows,
    functions: n.functions !== undefined ? functionsPort(n.functions) : noFunctions,
    allocations: n.provider !== undefined ? allocationsPort(n.provider) : noAllocations,
    mode: n.provider !== undefined ? nodeModePort(n.provider, n.requestStop) : noMode,
    resources: n.onboarding ?? noResources,
    blobs: blobsPort(n.blobs, n.uploads),
    metrics: n.metrics,
  }
}
