import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { createActor, type Actor as XActor, type Snapshot } from 'xstate'
import { delay, timeoutSignal, type Clock } from '../../actors/clock.js'
import { codeOf, DmsError } from '../../actors/errors.js'
import { SerialQueue } from '../../actors/serial.js'
import { KeyPair } from '../../actors/identity.js'
import type { Actor, ActorSystem, Message } from '../../actors/system.js'
import type { Transport } from '../../actors/transport.js'
import type { Handle } from '../../actors/envelope.js'
import { hashDoc, signDoc, verifyDoc } from '../contracts/canonical.js'
import { ContractDbClient } from '../contracts/client.js'
import {
  DOMAIN,
  TERMINATION,
  type ApprovalCredential,
  type ContractTerms,
  type ContractProof,
  type Settlement,
  type SignedContract,
  type TerminationReason,
  type Verification,
  type Bid,
} from '../contracts/model.js'
import { W } from '../protocol/behaviours.js'
import { BID_REQUEST_TOPIC, handleOf, INBOX, jobInbox, publicKeyOf } from '../protocol/handles.js'
import {
  declinedForNow,
  HEARTBEAT,
  type BidMessage,
  type BidRequest,
  type Decline,
  type JobLog,
  type JobResult,
  type JobUpdate,
  type SettleReply,
} from '../protocol/messages.js'
import { Repo, type Db } from '../store/db.js'
import { createJobMachine, JobFailure, type JobSteps, type Patch, type Step } from './job-machine.js'
import type { JobId, JobRecord, JobState } from './job-record.js'
import type { JobSpec } from './job-spec.js'
import { JobSession } from './session.js'
import { BidAudience, waitForWindow } from './bid-audience.js'
import { fetchAndCheckOutputs, grantInputs, resolveInputs } from './data-plane.js'
import type { BlobService } from '../blobs/service.js'
import type { InputFile } from '../blobs/staging.js'
import { reliabilityOf, type ProviderRecord } from './select.js'
import { bidProblem, declineProblem, type AdmissionContext } from './bid-admission.js'
import { closeContractStep } from './close-contract.js'

export interface OrchestratorInit {
  /** The contract-db this requester uses: peer id and addresses. */
  contractDb: { peer: string; addrs: string[] }
  /** Longest bid window. @default 3000 */
  bidWindowMs?: number
  /** Close the window early once this many bids are in. @default 3 */
  enoughBids?: number
  /** Grace after the max duration before a silent provider is given up. @default 30000 */
  resultGraceMs?: number
  /** Per-request timeout for lock, contract, invocation, settlement. @default 10000 */
  requestTimeoutMs?: number
  /**
   * Attempts at settling or terminating when the contract-db is unreachable or slow (it may be
   * restarting), and at verifying a contract when it is unreachable; waits 1 s, 2 s, 4 s...
   * between them. @default 4
   */
  settleAttempts?: number
  /** Bid requests published (1 s, 2 s... apart) while some providers stay silent. @default 3 */
  publishAttempts?: number
  /** A running job's provider silent this long is dropped (provider fault). @default 6000 */
  livenessTimeoutMs?: number
  /**
   * Bid requests in a row a provider may leave unanswered before bid windows stop waiting for it
   * (it is still asked, and its answers count). @default 3
   */
  bidSilentAfter?: number
  /** Longest a bid window stays open after its first answer, for providers yet to answer. @default 500 */
  bidStragglerMs?: number
}

export interface OrchestratorComponents {
  system: ActorSystem
  transport: Transport
  key: KeyPair
  db: Db
  clock: Clock
  log: Logger
  /** This node's blobs: job inputs served to providers, output archives fetched from them. */
  blobs: BlobService
  /**
   * This node's approval credential from its contract-db, attached to every bid request:
   * providers answer only approved requesters (specs/protocol.md, "Approval").
   */
  approval: {
    current(): ApprovalCredential | undefined
    ready(timeoutMs: number, signal?: AbortSignal): Promise<ApprovalCredential>
  }
}

/** A job as stored and shown: the machine's context plus its current state. */
export interface StoredJob {
  state: JobState
  record: JobRecord
  /** The machine's persisted snapshot, restored by `start` after a restart. */
  snapshot?: unknown
}

/** Job states a machine never leaves. */
export const FINAL_STATES: JobState[] = ['completed', 'failed', 'cancelled']

export class JobNotFoundError extends DmsError {
  constructor(id: string) {
    super('JOB_NOT_FOUND', `no job ${id}`)
  }
}
export class JobEndedError extends DmsError {
  constructor(id: string, state: string) {
    super('JOB_ENDED', `job ${id} already ended: ${state}`)
  }
}

type Running = { machine: XActor<ReturnType<typeof createJobMachine>>; session: JobSession; actor: Actor }

/**
 * The requester role: takes posted jobs through the market to settlement, one xstate job machine
 * and one actor (inbox `job/<id>`) per job.
 */
export class Orchestrator {
  readonly jobs: Repo<StoredJob>
  /** This requester's record of each provider it used (completed jobs, faults), for ranking. */
  readonly providers: Repo<ProviderRecord>
  private readonly running = new Map<JobId, Running>()
  private readonly listeners = new Set<(job: StoredJob) => void>()
  private readonly updateListeners = new Set<(jobId: JobId, update: JobUpdate) => void>()
  private readonly providerCache = new Map<string, ProviderRecord | undefined>()
  private readonly logListeners = new Set<(jobId: JobId, log: JobLog) => void>()
  private readonly cfg: Required<Omit<OrchestratorInit, 'contractDb'>>
  /** Bids not ranked, by reason (`dms_requester_bids_ignored_total`; specs/protocol.md). */
  readonly bidsIgnored: Record<string, number> = {}
  /** Declines not kept, by reason (`dms_requester_declines_ignored_total`). */
  readonly declinesIgnored: Record<string, number> = {}
  /** Which providers bid windows wait for (silent ones are learned and left out). */
  readonly audience: BidAudience

  constructor(
    private readonly c: OrchestratorComponents,
    private readonly init: OrchestratorInit,
  ) {
    this.jobs = new Repo(c.db, 'jobs')
    this.cfg = {
      bidWindowMs: init.bidWindowMs ?? 3000,
      enoughBids: init.enoughBids ?? 3,
      resultGraceMs: init.resultGraceMs ?? 30_000,
      requestTimeoutMs: init.requestTimeoutMs ?? 10_000,
      settleAttempts: init.settleAttempts ?? 4,
      publishAttempts: init.publishAttempts ?? 3,
      livenessTimeoutMs: init.livenessTimeoutMs ?? 6000,
      bidSilentAfter: init.bidSilentAfter ?? 3,
      bidStragglerMs: init.bidStragglerMs ?? 500,
    }
    this.providers = new Repo(c.db, 'provider-records')
    this.audience = new BidAudience({
      silentAfter: this.cfg.bidSilentAfter,
      stragglerMs: this.cfg.bidStragglerMs,
    })
  }

  /** Called with every persisted change of any job (for the API's live views and tests). */
  onChange(fn: (job: StoredJob) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  /** Called with each piece of live output a job's provider streams (`/dms/job/log`). */
  onLog(fn: (jobId: JobId, log: JobLog) => void): () => void {
    this.logListeners.add(fn)
    return () => this.logListeners.delete(fn)
  }

  /** The live output received so far of a running job (undefined when it is not running here). */
  liveLogs(id: JobId): { stdout: string; stderr: string; truncated: boolean } | undefined {
    return this.running.get(id)?.session.logs()
  }

  /** Called with each progress update a job's provider sends (live, before it is persisted). */
  onUpdate(fn: (jobId: JobId, update: JobUpdate) => void): () => void {
    this.updateListeners.add(fn)
    return () => this.updateListeners.delete(fn)
  }

  stop(): void {
    for (const r of this.running.values()) {
      r.machine.stop()
      r.actor.stop()
    }
    this.running.clear()
  }

  async get(id: JobId): Promise<StoredJob | undefined> {
    const stored = await this.jobs.get(id)
    const live = this.running.get(id)
    if (stored !== undefined && live !== undefined) stored.record.updates = [...live.session.updates]
    return stored
  }

  async list(): Promise<StoredJob[]> {
    return this.jobs.values()
  }

  /** Accepts a validated spec and starts its journey; returns once the job is stored. */
  async post(parsed: JobSpec): Promise<StoredJob> {
    // Inline inputs become blobs here, so the stored job holds ids, never content.
    const inputs = await resolveInputs(this.c.blobs, parsed.inputs, parsed.resources.diskBytes)
    const spec: JobSpec = { ...parsed, ...(inputs.length > 0 ? { inputs } : { inputs: undefined }) }
    if (inputs.length === 0) delete spec.inputs
    const id = randomUUID()
    const record: JobRecord = {
      id,
      spec,
      createdAt: this.c.clock.now(),
      history: [],
      bids: [],
      declines: [],
      tried: [],
      updates: [],
    }
    return this.launch(record)
  }

  /**
   * Restores every job an earlier process left in a non-final state from its persisted snapshot.
   * The step of the state it was in runs again (xstate restarts an active promise actor), and its
   * deadlines are computed from the record (absolute times), so they are re-armed, not reset.
   */
  async start(): Promise<number> {
    let restored = 0
    for (const job of await this.jobs.values()) {
      if (FINAL_STATES.includes(job.state) || job.snapshot === undefined) continue
      if (this.running.has(job.record.id)) continue
      await this.launch(job.record, { ...(job.snapshot as object), context: job.record })
      restored++
    }
    if (restored > 0) this.c.log.info({ restored }, 'jobs restored after restart')
    return restored
  }

  /**
   * Cancels a job: its machine goes to `cancelling`, which stops the provider's run and terminates
   * the contract with REQUESTER_CANCELLED (the time used is paid), then to `cancelled`.
   * Resolves with the job's state once the cancel is accepted.
   */
  async cancel(id: JobId): Promise<StoredJob> {
    const stored = await this.jobs.get(id)
    if (stored === undefined) throw new JobNotFoundError(id)
    const live = this.running.get(id)
    if (FINAL_STATES.includes(stored.state) || live === undefined) throw new JobEndedError(id, stored.state)
    live.machine.send({ type: 'CANCEL' })
    const snap = live.machine.getSnapshot()
    return { state: snap.value, record: snap.context }
  }

  private launch(record: JobRecord, snapshot?: unknown): Promise<StoredJob> {
    const id = record.id
    const session = new JobSession(this.c.clock)
    // The job's actor has its own key; contracts are still signed with the node key.
    const actor = this.c.system
      .spawn(jobInbox(id), KeyPair.generate())
      .on(W.bid, (m) => this.onBid(id, session, m))
      .on(W.decline, (m) => this.onDecline(id, session, m))
      .on(W.update, (m) => {
        const u = m.payload
        if (u.jobId === id && this.isWinner(id, m.peer)) {
          const heartbeat = u.detail === HEARTBEAT
          session.addUpdate(u, this.c.clock.now(), heartbeat)
          if (!heartbeat) for (const fn of this.updateListeners) fn(id, u)
        }
      })
      .on(W.log, (m) => {
        const l = m.payload
        if (l.jobId === id && this.isWinner(id, m.peer)) {
          session.addLog(l)
          for (const fn of this.logListeners) fn(id, l)
        }
      })
      .on(W.result, (m) => {
        const r = m.payload
        if (r.jobId === id && this.isWinner(id, m.peer)) session.setResult(r)
      })
    const machine = createActor(createJobMachine(this.steps(session, actor), this.c.clock), {
      clock: this.c.clock,
      input: record,
      ...(snapshot !== undefined ? { snapshot: snapshot as Snapshot<unknown> } : {}),
    })
    this.running.set(id, { machine, session, actor })
    let first = true
    let resolveStored!: (j: StoredJob) => void
    const stored = new Promise<StoredJob>((r) => (resolveStored = r))
    // Persist on every transition, in order; xstate emits synchronously, so the writes queue.
    const writes = new SerialQueue()
    machine.subscribe((snap) => {
      const job: StoredJob = {
        state: snap.value,
        record: snap.context,
        // The snapshot's context is the record: stored once (halves every write); a final job
        // is never restored, so it keeps no snapshot.
        ...(snap.status === 'done'
          ? {}
          : { snapshot: { ...machine.getPersistedSnapshot(), context: undefined } }),
      }
      writes
        .run(async () => {
          await this.jobs.put(id, job)
          for (const l of this.listeners) l(job)
          if (first) {
            first = false
            resolveStored(job)
          }
          if (snap.status === 'done') await this.finish(id)
        })
        .catch((err: unknown) => this.c.log.error({ err, jobId: id }, 'job not persisted'))
    })
    machine.start()
    if (snapshot !== undefined && first) {
      // A restored machine emits nothing until its next transition: it is stored already.
      first = false
      resolveStored({ state: machine.getSnapshot().value, record: machine.getSnapshot().context })
    }
    return stored
  }

  /**
   * A provider's local record, read through a cache: every job ranks every bid by it, and this
   * orchestrator is the only writer (see `finish`).
   */
  private async providerRecord(peer: string): Promise<ProviderRecord | undefined> {
    if (!this.providerCache.has(peer)) {
      const rec = await this.providers.get(peer)
      if (this.providerCache.size >= 10_000) this.providerCache.clear()
      if (!this.providerCache.has(peer)) this.providerCache.set(peer, rec)
    }
    return this.providerCache.get(peer)
  }

  private isWinner(id: JobId, peer: string): boolean {
    return this.running.get(id)?.machine.getSnapshot().context.winner?.provider === peer
  }

  private async finish(id: JobId): Promise<void> {
    const r = this.running.get(id)
    if (r === undefined) return
    this.running.delete(id)
    r.actor.stop()
    const snap = r.machine.getSnapshot()
    this.c.log.info({ jobId: id, state: snap.value, error: snap.context.error }, 'job finished')
    // The provider record used to rank future bids: faults dropped, and who completed.
    const job = snap.context
    const bump = async (peer: string, field: keyof ProviderRecord) => {
      await this.providerRecord(peer) // loaded into the cache; the update below does not await
      const rec = { ...(this.providerCache.get(peer) ?? { completed: 0, faults: 0 }) }
      rec[field]++
      this.providerCache.set(peer, rec)
      await this.providers.put(peer, rec)
    }
    for (const a of job.attempts ?? []) await bump(a.provider, 'faults')
    if (snap.value === 'completed' && job.winner !== undefined) await bump(job.winner.provider, 'completed')
  }

  /** The facts a bid or decline for job `id` is checked against; undefined when not bidding. */
  private admission(id: JobId): AdmissionContext | undefined {
    const job = this.running.get(id)?.machine.getSnapshot()
    if (job === undefined || job.value !== 'bidding') return undefined
    return {
      jobId: id,
      spec: job.context.spec,
      excluded: job.context.excluded ?? [],
      contractDb: this.init.contractDb.peer,
      now: this.c.clock.now(),
    }
  }

  /** Keeps a bid for ranking only if it passes every check (bid-admission.ts); counts the others. */
  private onBid(id: JobId, session: JobSession, m: Message<BidMessage>): void {
    const ctx = this.admission(id)
    const why = ctx === undefined ? 'not_bidding' : bidProblem(m, ctx)
    if (why !== undefined) {
      this.bidsIgnored[why] = (this.bidsIgnored[why] ?? 0) + 1
      this.c.log.debug({ jobId: id, from: m.peer, why }, 'bid ignored')
      return
    }
    session.addBid(m.payload.bid, m.from)
  }

  private onDecline(id: JobId, session: JobSession, m: Message<Decline>): void {
    const ctx = this.admission(id)
    const why = ctx === undefined ? 'not_bidding' : declineProblem(m, ctx)
    if (why !== undefined) {
      this.declinesIgnored[why] = (this.declinesIgnored[why] ?? 0) + 1
      return
    }
    // Kept without the credential: it was checked, and the record shows only the reasons.
    const { approval: _credential, ...decline } = m.payload
    session.addDecline(decline)
  }

  /**
   * Tells every other bidder of this round that its bid lost, so it frees the resources it reserved
   * now instead of at the bid's expiry (a provider otherwise stays "full" of losing bids). Best effort.
   */
  private releaseLosers(actor: Actor, job: JobRecord, session: JobSession): void {
    for (const b of job.bids) if (b.bidId !== job.winner?.bidId) this.releaseBid(actor, job, session, b)
  }

  /** `/dms/job/bid-release` to the bidder of `bid`, best effort: it frees what it holds for it. */
  private releaseBid(actor: Actor, job: JobRecord, session: JobSession, b: Bid): void {
    const addrs = session.providerAddrs.get(b.provider) ?? job.providerAddrs?.[b.provider]
    actor
      .send(handleOf(b.provider, INBOX.provider, addrs), W.bidRelease, { jobId: job.id, bidId: b.bidId })
      .catch(() => undefined)
  }

  private providerHandle(job: JobRecord, session: JobSession): Handle {
    const peer = job.winner?.provider as string
    return handleOf(peer, INBOX.provider, session.providerAddrs.get(peer) ?? job.providerAddrs?.[peer])
  }

  /** The contract-db client of one job, sending as the job's actor. */
  private contractDbOf(actor: Actor): ContractDbClient {
    return new ContractDbClient(
      { actor, clock: this.c.clock },
      {
        contractDb: this.init.contractDb,
        timeoutMs: this.cfg.requestTimeoutMs,
        attempts: this.cfg.settleAttempts,
      },
    )
  }

  /**
   * Wraps a step after contract verification: when it fails (not on abort), the contract is
   * terminated for provider fault, so the escrow returns to the requester; the signed
   * termination lands in the record as its `settlement`.
   */
  private terminatesOnFailure(actor: Actor, cdb: ContractDbClient, step: Step): Step {
    return async (job, signal) => {
      try {
        return await step(job, signal)
      } catch (err) {
        if (signal.aborted || job.proof === undefined) throw err
        const failure = err instanceof JobFailure ? err : new JobFailure(codeOf(err), (err as Error).message)
        failure.patch = {
          settlement: await this.terminate(cdb, job, TERMINATION.providerFault, failure.message, signal),
        }
        this.stopDropped(actor, job)
        throw failure
      }
    }
  }

  /**
   * Tells a provider dropped for a fault to stop the run, in case it is alive after all (slow, or
   * cut off for a while): its container would otherwise run to the end for a contract that is
   * already terminated. Best effort: a dead provider cannot hear it.
   */
  private stopDropped(actor: Actor, job: JobRecord): void {
    const peer = job.winner?.provider
    const contractId = job.contract?.terms.contractId
    if (peer === undefined || contractId === undefined) return
    const to = handleOf(peer, INBOX.provider, job.providerAddrs?.[peer])
    actor.request(to, W.cancel, { jobId: job.id, contractId }, { timeoutMs: 5000 }).catch(() => undefined)
  }

  /** Terminates the job's contract; undefined (logged) when the contract-db did not answer. */
  private async terminate(
    cdb: ContractDbClient,
    job: JobRecord,
    reason: TerminationReason,
    detail: string,
    signal: AbortSignal,
  ): Promise<Settlement | undefined> {
    try {
      const terms = job.contract?.terms as ContractTerms
      return await cdb.terminate({ contractId: terms.contractId, reason, detail }, terms, { signal })
    } catch (err) {
      this.c.log.warn({ err, jobId: job.id }, 'contract not terminated: escrow stays locked')
      return undefined
    }
  }

  private steps(session: JobSession, actor: Actor): JobSteps {
    const { clock } = this.c
    const timeoutMs = this.cfg.requestTimeoutMs
    const cdb = this.contractDbOf(actor)
    return {
      collectBids: async (job, signal): Promise<Patch> => {
        session.reset()
        // Providers answer only approved requesters: no credential, no bid request (a clear failure).
        let approval: ApprovalCredential
        try {
          approval = await this.c.approval.ready(this.cfg.requestTimeoutMs, signal)
        } catch (err) {
          signal.throwIfAborted()
          throw new JobFailure('NOT_APPROVED', (err as Error).message)
        }
        // A bid request published before any provider is subscribed reaches nobody: wait (bounded).
        const waiting = timeoutSignal(this.cfg.bidWindowMs, { clock, signal })
        const seen = await this.c.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1, { signal: waiting }).then(
          () => true,
          () => false,
        )
        signal.throwIfAborted()
        const reliability: Record<string, number> = {}
        const done = async (): Promise<Patch> => {
          for (const b of session.bids)
            reliability[b.provider] = reliabilityOf(await this.providerRecord(b.provider))
          return {
            bids: [...session.bids],
            declines: [...session.declines],
            reliability,
            providerAddrs: Object.fromEntries(session.providerAddrs),
          }
        }
        if (!seen) return done()
        // Published again (1 s, 2 s... later) while no bid came and some providers stayed silent
        // or said "not now": a request can be lost (e.g. published before gossipsub's stream to a
        // new peer is open), and a provider holding as much as it lets this requester hold frees
        // it as this requester's other bids are locked or released (REQUESTER_CAP_REASON).
        for (let attempt = 0; attempt < this.cfg.publishAttempts; attempt++) {
          if (attempt > 0) {
            await delay(1000 * 2 ** (attempt - 1), { clock, signal })
            session.dropDeclines(declinedForNow)
          }
          const openedAt = clock.now()
          const deadline = openedAt + this.cfg.bidWindowMs
          const exclude = [...job.spec.providers.deny, ...(job.excluded ?? [])]
          // Who the window may close early for: live subscribers, minus known-silent peers.
          const window = this.audience.open({
            jobId: job.id,
            subscribers: this.c.transport.topicSubscribers(BID_REQUEST_TOPIC),
            exclude,
            openedAt,
            deadline,
            enoughBids: this.cfg.enoughBids,
          })
          const req: BidRequest = {
            jobId: job.id,
            resources: job.spec.resources,
            image: job.spec.image,
            maxDurationSeconds: job.spec.maxDurationSeconds,
            maxPrice: job.spec.maxPrice,
            deadline,
            exclude,
            // Renewed while this job waited, if need be.
            approval: this.c.approval.current() ?? approval,
          }
          await actor.publish(BID_REQUEST_TOPIC, W.bidRequest, req, this.cfg.bidWindowMs + 5000)
          await waitForWindow(window, session, clock, signal)
          const summary = window.close(clock.now())
          this.c.log.debug(summary, 'bid window closed')
          // A "not now" decline (REQUESTER_CAP_REASON) is an answer, but worth asking again.
          const forNow = session.declines.some(declinedForNow)
          if (session.bids.length > 0 || (!window.waitingForSome && !forNow)) break
        }
        return done()
      },

      requestLock: async (job, signal) => {
        const bidId = job.winner?.bidId as string
        await actor.request(
          this.providerHandle(job, session),
          W.jobRequest,
          { jobId: job.id, bidId },
          { timeoutMs, signal },
        )
        return {}
      },

      closeContract: closeContractStep({
        actor,
        key: this.c.key,
        clock,
        peerId: this.c.system.peerId,
        contractDb: cdb,
        timeoutMs,
        provider: (job) => this.providerHandle(job, session),
        release: (job, bid) => this.releaseBid(actor, job, session, bid),
        releaseLosers: (job) => this.releaseLosers(actor, job, session),
      }),

      invoke: this.terminatesOnFailure(actor, cdb, async (job, signal) => {
        const inputs = (job.spec.inputs ?? []) as InputFile[]
        await grantInputs(this.c.blobs, job.winner?.provider as string, inputs)
        const reply = await actor.request(
          this.providerHandle(job, session),
          W.invoke,
          {
            contract: job.contract as SignedContract,
            proof: job.proof as ContractProof,
            command: job.spec.command,
            env: job.spec.env,
            inputs,
          },
          { timeoutMs, signal },
        )
        return { allocationId: reply.allocationId }
      }),

      awaitResult: this.terminatesOnFailure(actor, cdb, async (job, signal) => {
        // Deadlines are absolute (from the record), so a restored job re-arms them where they were.
        const runningSince = job.history.findLast((h) => h.state === 'running')?.at ?? clock.now()
        const deadline = runningSince + job.spec.maxDurationSeconds * 1000 + this.cfg.resultGraceMs
        const liveness = this.cfg.livenessTimeoutMs
        let seen = clock.now()
        for (;;) {
          const before = session.lastSeen
          const wait = Math.min(deadline, seen + liveness) - clock.now()
          await session.until(() => session.result !== undefined || session.lastSeen !== before, wait, signal)
          if (session.result !== undefined) break
          if (session.lastSeen !== before) {
            seen = session.lastSeen
            continue
          }
          if (clock.now() >= deadline)
            throw new JobFailure(
              'PROVIDER_SILENT',
              `no result from the provider within ${Math.round((deadline - runningSince) / 1000)}s`,
            )
          if (clock.now() - seen >= liveness)
            throw new JobFailure('PROVIDER_SILENT', `provider silent for ${liveness} ms (no heartbeat)`)
        }
        return { result: session.result, updates: [...session.updates], lastSeenAt: session.lastSeen }
      }),

      // A malformed result makes verify throw: that too is the provider's fault.
      verify: this.terminatesOnFailure(actor, cdb, async (job, signal) => {
        const r = job.result as JobResult
        const provider = job.winner?.provider as string
        const receiptSignatureOk =
          r.receipt?.receipt?.contractId === job.contract?.terms.contractId &&
          verifyDoc(publicKeyOf(provider), DOMAIN.receipt, r.receipt.receipt, r.receipt.signature)
        // The outputs are fetched (one archive, in chunks) and checked file by file.
        const outputs = await fetchAndCheckOutputs(
          actor,
          this.c.blobs,
          { peer: provider, addrs: session.providerAddrs.get(provider) ?? [] },
          r,
          { signal, timeoutMs },
        )
        if (!outputs.ok) this.c.log.warn({ jobId: job.id, reason: outputs.reason }, 'outputs did not verify')
        return {
          verification: {
            outputsHashOk: outputs.ok,
            receiptSignatureOk,
            ...(outputs.ok ? {} : { outputsProblem: outputs.reason }),
          },
        }
      }),

      settle: async (job, signal) => {
        const r = job.result as JobResult
        const v = job.verification as { outputsHashOk: boolean; receiptSignatureOk: boolean }
        const verified = v.outputsHashOk && v.receiptSignatureOk
        const contractId = job.contract?.terms.contractId as string
        const verification: Verification = {
          contractId,
          receiptHash: hashDoc(r.receipt?.receipt),
          verified,
          outputsHashOk: v.outputsHashOk,
          receiptSignatureOk: v.receiptSignatureOk,
          verifiedAt: clock.now(),
        }
        let settlement: SettleReply
        try {
          settlement = await cdb.settle(
            {
              contractId,
              receipt: r.receipt,
              verification: {
                verification,
                signature: signDoc(this.c.key, DOMAIN.verification, verification),
              },
            },
            job.contract?.terms as ContractTerms,
            { signal },
          )
        } catch (err) {
          throw new JobFailure('SETTLEMENT_FAILED', `contract-db did not settle: ${(err as Error).message}`)
        }
        const receipt = r.receipt.receipt
        if (!verified)
          return {
            settlement,
            error: {
              code: 'VERIFICATION_FAILED',
              message: 'outputs or receipt did not verify; escrow refunded',
            },
          }
        if (receipt.status !== 'completed')
          return {
            settlement,
            error: {
              code: `RUN_${receipt.status.toUpperCase()}`,
              message: receipt.reason ?? `run ${receipt.status} (exit code ${receipt.exitCode})`,
            },
          }
        return { settlement }
      },

      cancel: async (job, signal) => {
        // Nothing contracted yet: the provider's reservation or lock lapses on its own.
        if (job.proof === undefined) return { cancelRequestedAt: clock.now() }
        const contractId = job.contract?.terms.contractId as string
        try {
          const r = await actor.request(
            this.providerHandle(job, session),
            W.cancel,
            { jobId: job.id, contractId },
            { timeoutMs, signal },
          )
          // The stopped run's receipt (status cancelled, with its usage) bills the time used.
          if (r.stopping) await session.until(() => session.result !== undefined, timeoutMs, signal)
        } catch (err) {
          this.c.log.warn({ err, jobId: job.id }, 'provider did not confirm the cancel')
        }
        const receipt = session.result?.receipt
        const settlement = await cdb.terminate(
          {
            contractId,
            reason: TERMINATION.requesterCancelled,
            detail: 'cancelled by the requester',
            ...(receipt !== undefined ? { receipt } : {}),
          },
          job.contract?.terms as ContractTerms,
          { signal },
        )
        return {
          settlement,
          cancelRequestedAt: clock.now(),
          ...(session.result ? { result: session.result } : {}),
        }
      },
    }
  }
}
