/**
 * Fakes for the requester's steps (dms/orchestrator/steps/): a job actor whose peers' answers are
 * scripted per behaviour, a contract-db, a bid-request topic, an approval holder, all on a
 * ManualClock, and a job record to run a step on. Peer ids and signatures are real (handles are
 * built from Ed25519 peer ids; the steps check signatures).
 */
import { CapacityBoard } from '../../dms/orchestrator/capacity-board.js'
import { Wakers } from '../../dms/orchestrator/wakers.js'
import { randomUUID } from 'node:crypto'
import { ManualClock } from '../../actors/clock.js'
import type { BehaviourDef } from '../../actors/codec.js'
import type { Handle } from '../../actors/envelope.js'
import { issueApproval } from '../../dms/contracts/approval.js'
import { issueFunds } from '../../dms/contracts/funds.js'
import { signDoc } from '../../dms/contracts/canonical.js'
import { DOMAIN, type ApprovalCredential, type Bid, type Settlement } from '../../dms/contracts/model.js'
import { escrowFor } from '../../dms/contracts/money.js'
import { silentLogger } from '../../dms/log.js'
import { BidAudience } from '../../dms/orchestrator/bid-audience.js'
import type {
  JobBlobs,
  JobInput,
  OutputsCheck,
  OutputsFetchOptions,
} from '../../dms/orchestrator/data-plane.js'
import type { InputFile } from '../../dms/blobs/staging.js'
import type { JobRecord } from '../../dms/orchestrator/job-record.js'
import { JobSession } from '../../dms/orchestrator/session.js'
import type { StepDeps } from '../../dms/orchestrator/steps/deps.js'
import type { RequestOptions } from '../../actors/system.js'
import { newParty, type Who } from './contracts.js'

export const T0 = 1_800_000_000_000

/** One message the job's actor sent. */
export interface Sent {
  kind: 'request' | 'send' | 'publish'
  behaviour: string
  to?: Handle
  topic?: string
  payload: unknown
  opts?: RequestOptions
  at: number
}

/** An answer to a request: a value, a promise, or a throw (the request rejects). */
export type Answer = (payload: never, to: Handle) => unknown

/**
 * The job's actor: records what it sends (with the clock's time) and answers each request with
 * the answer scripted for its behaviour (rejecting when none is).
 */
export class FakeJobActor {
  readonly sent: Sent[] = []
  readonly answers = new Map<string, Answer>()
  /** Called with each broadcast, e.g. to have providers answer a bid request. */
  onPublish: (payload: never) => void = () => undefined
  /** Called with each direct send, e.g. to have a provider answer a direct bid request. */
  onSend: (payload: never, to: Handle, behaviour: string) => void = () => undefined

  constructor(private readonly clock: ManualClock) {}

  answer<Req, Rep>(
    behaviour: BehaviourDef<Req, Rep>,
    fn: (payload: Req, to: Handle) => Rep | Promise<Rep>,
  ): this {
    this.answers.set(behaviour.name, fn)
    return this
  }

  request<Req, Rep>(
    to: Handle,
    behaviour: BehaviourDef<Req, Rep>,
    payload: Req,
    opts?: RequestOptions,
  ): Promise<Rep> {
    this.sent.push({ kind: 'request', behaviour: behaviour.name, to, payload, opts, at: this.clock.now() })
    const fn = this.answers.get(behaviour.name)
    if (fn === undefined) return Promise.reject(new Error(`no answer scripted for ${behaviour.name}`))
    try {
      return Promise.resolve(fn(payload as never, to) as Rep)
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)))
    }
  }

  send<Req>(to: Handle, behaviour: BehaviourDef<Req, unknown>, payload: Req): Promise<void> {
    this.sent.push({ kind: 'send', behaviour: behaviour.name, to, payload, at: this.clock.now() })
    this.onSend(payload as never, to, behaviour.name)
    return Promise.resolve()
  }

  publish<Req>(topic: string, behaviour: BehaviourDef<Req, unknown>, payload: Req): Promise<void> {
    this.sent.push({ kind: 'publish', behaviour: behaviour.name, topic, payload, at: this.clock.now() })
    this.onPublish(payload as never)
    return Promise.resolve()
  }

  /** What was sent with `behaviour`, in order. */
  of(behaviour: BehaviourDef<never, unknown> | { name: string }): Sent[] {
    return this.sent.filter((s) => s.behaviour === behaviour.name)
  }
}

/** The bid-request topic: a fixed list of subscribers. */
export class FakeTopic {
  constructor(public subscribers: string[] = []) {}
  topicSubscribers(): string[] {
    return [...this.subscribers]
  }
  /** Resolves at once when someone is subscribed, else when the signal aborts (rejecting). */
  waitForTopicPeers(_topic: string, n: number, options?: { signal?: AbortSignal }): Promise<void> {
    if (this.subscribers.length >= n) return Promise.resolve()
    return new Promise((_resolve, reject) =>
      options?.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
    )
  }
}

/** A contract-db whose verify/settle/terminate answers are scripted; records the calls. */
export class FakeContractDb {
  readonly calls: Array<{
    op: 'verify' | 'settle' | 'terminate'
    req: unknown
    at: number
    opts?: { timeoutMs?: number }
  }> = []
  verifyAnswer: (contract: unknown) => unknown = () => {
    throw new Error('verify not scripted')
  }
  closeAnswer: (op: 'settle' | 'terminate', req: unknown) => unknown = (op, req) =>
    settlementFor((req as { contractId: string }).contractId, op === 'settle' ? 'settled' : 'terminated')

  constructor(
    private readonly clock: ManualClock,
    readonly peer = newParty().peer,
  ) {}

  verify = (contract: unknown) => this.call('verify', contract, () => this.verifyAnswer(contract))
  settle = (req: unknown, _terms?: unknown, opts?: { timeoutMs?: number }) =>
    this.call('settle', req, () => this.closeAnswer('settle', req), opts)
  terminate = (req: unknown) => this.call('terminate', req, () => this.closeAnswer('terminate', req))

  private call<T>(
    op: 'verify' | 'settle' | 'terminate',
    req: unknown,
    answer: () => unknown,
    opts?: { timeoutMs?: number },
  ): Promise<T> {
    this.calls.push({ op, req, at: this.clock.now(), ...(opts !== undefined ? { opts } : {}) })
    try {
      return Promise.resolve(answer() as T)
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)))
    }
  }
}

export function settlementFor(contractId: string, outcome: Settlement['outcome'] = 'settled'): Settlement {
  return {
    contractId,
    outcome,
    paidToProvider: 10,
    refundedToRequester: 90,
    billedSeconds: 5,
    settledAt: T0,
    contractDb: 'cdb',
    signature: 'sig',
  }
}

/** The data plane: grants recorded, the output check's verdict scripted. */
export class FakeBlobs implements JobBlobs {
  readonly granted: Array<{ provider: string; sha256: string }> = []
  verdict: OutputsCheck = { ok: true }
  /** The options of each fetch, in order. */
  readonly fetches: OutputsFetchOptions[] = []
  grant(provider: string, inputs: JobInput[]): Promise<InputFile[]> {
    for (const f of inputs) this.granted.push({ provider, sha256: f.sha256 })
    return Promise.resolve(inputs as InputFile[])
  }
  fetchOutputs(_provider: unknown, _result: unknown, opts: OutputsFetchOptions): Promise<OutputsCheck> {
    this.fetches.push(opts)
    return Promise.resolve(this.verdict)
  }
}

/** A signed bid of `provider` for job `jobId` (60 s at `pricePerHour`). */
export function signedBid(
  provider: Who,
  jobId: string,
  o: { pricePerHour?: number; now?: number; start?: number } = {},
): Bid {
  const now = o.now ?? T0
  const start = o.start ?? now
  const pricePerHour = o.pricePerHour ?? 3600
  const body: Omit<Bid, 'signature'> = {
    bidId: randomUUID(),
    jobId,
    provider: provider.peer,
    resources: { cpu: 1, memoryBytes: 64 * 1024 * 1024, diskBytes: 0, gpus: 0 },
    image: 'dms-test:1',
    maxDurationSeconds: 60,
    pricePerHour,
    minJobPrice: 0,
    total: escrowFor(pricePerHour, 60, 0),
    earliestStart: start,
    expectedFinish: start + 60_000,
    expiresAt: now + 30_000,
    resourcesReserved: true,
  }
  return { ...body, signature: signDoc(provider.key, DOMAIN.bid, body) }
}

/** A job record as the machine hands it to a step. */
export function jobRecord(over: Partial<JobRecord> = {}): JobRecord {
  return {
    id: 'job-1',
    spec: {
      image: 'dms-test:1',
      command: ['true'],
      env: {},
      resources: { cpu: 1, memoryBytes: 64 * 1024 * 1024, diskBytes: 0, gpus: 0 },
      maxDurationSeconds: 60,
      maxPrice: 1_000_000,
      retries: 0,
      providers: { allow: [], deny: [] },
    },
    createdAt: T0,
    history: [{ state: 'bidding', at: T0 }],
    bids: [],
    declines: [],
    tried: [],
    updates: [],
    ...over,
  }
}

export const CONFIG: StepDeps['config'] = {
  bidWindowMs: 3000,
  enoughBids: 3,
  bidSample: 8,
  publishAttempts: 3,
  requestTimeoutMs: 10_000,
  resultGraceMs: 30_000,
  livenessTimeoutMs: 6000,
  outputsPace: { minBytesPerSecond: 256 * 1024, graceMs: 30_000 },
  queueRetryMinMs: 1000,
  queueRetryMaxMs: 30_000,
  startGraceSeconds: 120,
}

/** Everything a step may use, as fakes on one ManualClock; `over` replaces any part. */
export function stepDeps(over: Partial<StepDeps> = {}) {
  const clock = new ManualClock(T0)
  const requester = newParty()
  const cdb = new FakeContractDb(clock)
  const approval: ApprovalCredential = issueApproval(newParty().key, {
    peer: requester.peer,
    contractDb: cdb.peer,
    now: T0,
  })
  // Enough for any job a step test posts, valid for as long as any test drives the clock.
  const funds = issueFunds(newParty().key, {
    peer: requester.peer,
    contractDb: cdb.peer,
    available: Number.MAX_SAFE_INTEGER,
    now: T0,
    ttlMs: 365 * 86_400_000,
  })
  const fakes = {
    clock,
    actor: new FakeJobActor(clock),
    session: new JobSession(clock),
    contractDb: cdb,
    blobs: new FakeBlobs(),
    transport: new FakeTopic(),
    requester,
    approval,
    capacity: new CapacityBoard(new Wakers(clock)),
  }
  const deps: StepDeps = {
    clock,
    log: silentLogger,
    actor: fakes.actor,
    session: fakes.session,
    contractDb: cdb as unknown as StepDeps['contractDb'],
    blobs: fakes.blobs,
    transport: fakes.transport,
    approval: { current: () => approval, ready: () => Promise.resolve(approval) },
    funds: { current: () => funds, proofFor: () => Promise.resolve(funds) },
    audience: new BidAudience(),
    reliability: () => Promise.resolve(0.5),
    key: requester.key,
    peerId: requester.peer,
    config: CONFIG,
    capacity: fakes.capacity,
    ...over,
  }
  return { deps, ...fakes }
}

/** A signal that never aborts, and one to abort by hand. */
export const never = (): AbortSignal => new AbortController().signal

/** How a step ended: its patch or its error, and when on `clock` (if given). */
export interface Outcome<T> {
  value?: T
  error?: unknown
  at: number
}

/**
 * Settles `p` into its value or its error (so a rejection is never left unhandled while the test
 * drives the clock), noting the clock's time when it settled.
 */
export function outcome<T>(p: Promise<T>, clock?: ManualClock): Promise<Outcome<T>> {
  const at = () => clock?.now() ?? 0
  return p.then(
    (value) => ({ value, at: at() }),
    (error: unknown) => ({ error, at: at() }),
  )
}
