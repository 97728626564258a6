import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import { every, type Clock } from '../../actors/clock.js'
import { RefusedError } from '../../actors/errors.js'
import { KeyPair, keyToString } from '../../actors/identity.js'
import type { Actor, ActorSystem, Message } from '../../actors/system.js'
import { hashDoc, signDoc, verifyDoc } from '../contracts/canonical.js'
import { DOMAIN, type ApprovalCredential } from '../contracts/model.js'
import { termsBidProblem } from '../contracts/consistency.js'
import { partyIsConsistent, publicKeyOfPeer } from '../contracts/party.js'
import type { Executor } from '../executor/executor.js'
import { W } from '../protocol/behaviours.js'
import { BID_REQUEST_TOPIC, INBOX, allocationInbox, publicKeyOf } from '../protocol/handles.js'
import type {
  BidRelease,
  ContractSignReply,
  ContractSignRequest,
  Invocation,
  InvocationReply,
  JobCancel,
  JobCancelReply,
  JobRequest,
  JobRequestReply,
} from '../protocol/messages.js'
import type { ResourceLedger } from '../resources/ledger.js'
import type { MachineInfo } from '../resources/types.js'
import { Repo, type Db } from '../store/db.js'
import type { BlobService } from '../blobs/service.js'
import { AllocationRunner, type RecoverySummary, type AllocationRecord } from './allocation.js'
import { BidResponder, type BidRecord, type RequesterCap } from './bid-requests.js'
import type { Comparator } from './capability.js'
import { ImageCheck, type ImageCheckInit } from './images.js'
import type { PeerRateLimitInit } from './rate-limit.js'
import { invocationProblem } from './validate.js'

export type { BidRecord } from './bid-requests.js'

export interface ProviderInit {
  /** Peer id of the contract-db whose proofs this provider accepts. */
  contractDb: string
  /** How long a bid (and its reservation) stays valid. @default 30000 */
  bidTtlMs?: number
  /** How long a lock waits for contract and invocation before it is released. @default 60000 */
  lockTtlMs?: number
  /** How often expired reservations and overdue locks are released. @default 5000 */
  sweepIntervalMs?: number
  /** The accept policy (specs/job-spec.md, "Provider policy"). */
  preferences?: Pick<
    Comparator,
    | 'allowedImages'
    | 'maxDurationSeconds'
    | 'minPrice'
    | 'allowRequesters'
    | 'denyRequesters'
    | 'maxConcurrentJobs'
  >
  /** How often a running allocation sends a heartbeat update. @default 2000 */
  heartbeatMs?: number
  /** What one requester may hold in open reservations here. */
  requesterCap?: RequesterCap
  /** Bid requests answered per peer: a token bucket. @default { perSecond: 100, burst: 200 } */
  bidRequestRate?: PeerRateLimitInit
  /** Registries used and the image look-up cache (`ImageCheck`). */
  images?: ImageCheckInit
  /**
   * The disk quota of a job that gives none, capped at the free disk of the offer (disk-grant.ts).
   * @default 268435456 (256 MiB)
   */
  defaultDiskBytes?: number
}

export interface ProviderComponents {
  system: ActorSystem
  key: KeyPair
  ledger: ResourceLedger
  /**
   * The machine measurement (cached). A provider whose container engine is unavailable declines
   * every bid request with "docker unavailable: <why>". Not given: the engine is not checked.
   */
  machine?: { get(): Promise<MachineInfo>; refresh(): Promise<MachineInfo> }
  executor: Executor
  db: Db
  clock: Clock
  log: Logger
  /** The node's blobs: job inputs fetched from requesters, output archives served to them. */
  blobs: BlobService
  /** Holds the staged inputs of running allocations (`inputs/<allocationId>/`). */
  workDir: string
  /**
   * This node's approval credential from `contractDb`, attached to its bids and declines.
   * Without one the provider stays silent (specs/protocol.md, "Approval").
   */
  approval: { current(): ApprovalCredential | undefined }
}

/**
 * The provider role: answers bid requests it can serve with priced bids, locks on job request,
 * countersigns contracts, and turns invocations into allocations.
 */
export class ProviderService {
  private actor?: Actor
  private stopSweeper?: () => void
  readonly bids: Repo<BidRecord>
  /**
   * `bid-released` (bidId): a bid the requester gave up was freed early; `bid-request-ignored`
   * (reason): a bid request was dropped without an answer. For tests and metrics.
   */
  readonly events = new EventEmitter()
  readonly allocations: AllocationRunner
  private readonly responder: BidResponder
  /** Bid requests' images: refused before any engine call, else looked up through a cache. */
  readonly images: ImageCheck
  /** Contracts cancelled before their invocation arrived: the invocation is then refused. */
  private readonly cancelled = new Set<string>()

  constructor(
    private readonly c: ProviderComponents,
    private readonly init: ProviderInit,
  ) {
    this.bids = new Repo(c.db, 'provider-bids')
    this.allocations = new AllocationRunner(c, { heartbeatMs: init.heartbeatMs })
    this.images = new ImageCheck(c, init.images)
    this.responder = new BidResponder(
      { ...c, bids: this.bids, peerId: () => this.peerId, events: this.events, images: this.images },
      {
        contractDb: init.contractDb,
        bidTtlMs: init.bidTtlMs,
        preferences: init.preferences,
        requesterCap: init.requesterCap,
        bidRequestRate: init.bidRequestRate,
        defaultDiskBytes: init.defaultDiskBytes,
      },
    )
  }

  /** Declines made, by reason, for metrics and `dms resources`. */
  get declines(): Record<string, number> {
    return this.responder.declines
  }

  /** Bid requests dropped without an answer, by reason (rate limit, approval, malformed...). */
  get bidRequestsIgnored(): Record<string, number> {
    return this.responder.ignored
  }

  get peerId(): string {
    return this.c.system.peerId
  }

  /** What `start` found left by an earlier process (re-attached, restarted, lost, orphans removed). */
  recovered?: RecoverySummary

  /** Starts answering bid requests, then recovers allocations an earlier process left unfinished. */
  async start(): Promise<void> {
    if (this.actor !== undefined) return
    await this.responder.start()
    this.actor = this.c.system
      .spawn(INBOX.provider, this.c.key)
      .subscribe(BID_REQUEST_TOPIC)
      .on(W.bidRequest, (m) => this.responder.handle(this.actor as Actor, m))
      .on(W.jobRequest, (m) => this.onJobRequest(m))
      .on(W.contractSign, (m) => this.onContractSign(m))
      .on(W.invoke, (m) => this.onInvoke(m))
      .on(W.cancel, (m) => this.onCancel(m))
      .on(W.bidRelease, (m) => this.onBidRelease(m))
      .on(W.settled, () => undefined)
    this.stopSweeper = every(this.c.clock, this.init.sweepIntervalMs ?? 5000, () => void this.sweep())
    try {
      this.recovered = await this.allocations.recover((id) => this.spawnAllocation(id))
    } catch (err) {
      // The engine may be down: new bids are declined for that anyway; recovery runs at next start.
      this.c.log.warn({ err }, 'could not recover allocations left by an earlier run')
    }
  }

  /** Releases expired reservations and locks whose contract or invocation never came. */
  async sweep(): Promise<void> {
    try {
      await this.c.ledger.releaseExpired()
      for (const e of this.c.ledger.overdueLocks()) {
        this.c.log.info({ jobId: e.jobId, id: e.id }, 'lock overdue: released')
        await this.c.ledger.release(e.id)
      }
    } catch (err) {
      this.c.log.warn({ err }, 'resource sweep failed')
    }
  }

  /** Each allocation is its own child actor: its own key and inbox `alloc/<id>`. */
  private spawnAllocation(allocationId: string): Actor {
    return this.c.system.spawn(allocationInbox(allocationId), KeyPair.generate())
  }

  async stop(): Promise<void> {
    this.stopSweeper?.()
    this.actor?.stop()
    this.actor = undefined
    await this.allocations.stop()
  }

  /**
   * A bid the requester gave up: one that lost, or one whose contract failed before the
   * contract-db locked anything (the requester falls back to its next bid). Its reservation or
   * lock is freed now rather than at its expiry, so the resources can serve the next request.
   * Only the bid's requester can release it, and only before an invocation.
   */
  private async onBidRelease(msg: Message<BidRelease>): Promise<void> {
    const rec = typeof msg.payload?.bidId === 'string' ? await this.bids.get(msg.payload.bidId) : undefined
    if (rec === undefined || rec.requester.peer !== msg.peer || rec.bid.jobId !== msg.payload.jobId) return
    if (rec.state !== 'offered' && rec.state !== 'locked' && rec.state !== 'contracted') return
    await this.c.ledger.release(rec.bid.bidId)
    await this.bids.put(rec.bid.bidId, { ...rec, state: 'released' })
    // A later round for the same job (a re-bid after a fault) gets a fresh bid, not this one.
    this.responder.forget(rec.bid.jobId, rec.bid.bidId)
    this.events.emit('bid-released', rec.bid.bidId)
  }

  private async mine(bidId: unknown, msg: Message): Promise<BidRecord> {
    const rec = typeof bidId === 'string' ? await this.bids.get(bidId) : undefined
    if (rec === undefined) throw new RefusedError('UNKNOWN_BID', `no bid ${String(bidId)} here`)
    if (rec.requester.peer !== msg.peer)
      throw new RefusedError('NOT_YOUR_BID', 'this bid was made to another requester')
    return rec
  }

  private async onJobRequest(msg: Message<JobRequest>): Promise<JobRequestReply> {
    const rec = await this.mine(msg.payload?.bidId, msg)
    if (rec.state !== 'offered') throw new RefusedError('BID_NOT_OPEN', `bid is ${rec.state}`)
    try {
      await this.c.ledger.lock(rec.bid.bidId, {
        expiresAt: this.c.clock.now() + (this.init.lockTtlMs ?? 60_000),
      })
    } catch (err) {
      await this.bids.put(rec.bid.bidId, { ...rec, state: 'expired' })
      throw new RefusedError('LOCK_FAILED', `cannot lock resources: ${(err as Error).message}`)
    }
    await this.bids.put(rec.bid.bidId, { ...rec, state: 'locked' })
    this.responder.forget(rec.bid.jobId, rec.bid.bidId)
    return { locked: true, lockedUntil: this.c.clock.now() + (this.init.lockTtlMs ?? 60_000) }
  }

  private async onContractSign(msg: Message<ContractSignRequest>): Promise<ContractSignReply> {
    const contract = msg.payload?.contract
    const t = contract?.terms
    if (t === undefined) throw new RefusedError('BAD_TERMS', 'no contract terms')
    const rec = await this.mine(t.bidId, msg)
    if (rec.state !== 'locked') throw new RefusedError('BID_NOT_LOCKED', `bid is ${rec.state}`)
    const { bid } = rec
    // The parties are this provider and the asker, the contract-db is the trusted one, the bid
    // embedded is this bid, and the terms agree with it (consistency.ts, as the contract-db checks).
    const mismatch =
      t.provider?.peer !== this.peerId ||
      t.provider.publicKey !== keyToString(this.c.key.publicKey) ||
      t.requester?.peer !== msg.peer ||
      !partyIsConsistent(t.requester) ||
      t.contractDb !== this.init.contractDb ||
      hashDoc(t.bid) !== hashDoc(bid) ||
      termsBidProblem(t, bid) !== undefined
    if (mismatch) throw new RefusedError('TERMS_MISMATCH', 'contract terms do not match the bid')
    const publicKey = publicKeyOf(t.requester.peer)
    if (!verifyDoc(publicKey, DOMAIN.contract, t, contract.requesterSignature))
      throw new RefusedError('BAD_SIGNATURE', 'requester signature is invalid')
    const providerSignature = signDoc(this.c.key, DOMAIN.contract, t)
    await this.bids.put(bid.bidId, { ...rec, state: 'contracted', contractHash: hashDoc(t) })
    return { providerSignature }
  }

  private async onInvoke(msg: Message<Invocation>): Promise<InvocationReply> {
    const inv = msg.payload
    const t = inv?.contract?.terms
    if (t === undefined || inv.proof === undefined)
      throw new RefusedError('BAD_INVOCATION', 'invocation needs a contract and its proof')
    const rec = await this.mine(t.bidId, msg)
    if (rec.state !== 'contracted' || rec.contractHash !== hashDoc(t))
      throw new RefusedError('NOT_CONTRACTED', 'no contract signed by this provider matches the invocation')
    const { signature, ...proofBody } = inv.proof
    const cdbKey = publicKeyOfPeer(this.init.contractDb)
    if (
      cdbKey === undefined ||
      inv.proof.contractDb !== this.init.contractDb ||
      inv.proof.termsHash !== rec.contractHash ||
      !verifyDoc(cdbKey, DOMAIN.proof, proofBody, signature)
    )
      throw new RefusedError(
        'BAD_PROOF',
        'proof of contract is not signed by the trusted contract-db for these terms',
      )
    const runIssue = invocationProblem(inv, t.resources.diskBytes)
    if (runIssue !== undefined) throw new RefusedError('BAD_INVOCATION', runIssue)
    const inputs = inv.inputs ?? []
    if (this.cancelled.delete(t.contractId)) {
      await this.c.ledger.release(t.bidId)
      throw new RefusedError('CANCELLED', 'the requester cancelled this contract')
    }
    const entry = await this.c.ledger.allocate(t.bidId)
    await this.bids.put(t.bidId, { ...rec, state: 'invoked' })
    const allocationId = randomUUID()
    const record: AllocationRecord = {
      allocationId,
      jobId: t.jobId,
      contract: inv.contract,
      ledgerId: t.bidId,
      requester: msg.from,
      command: inv.command,
      env: inv.env ?? {},
      inputs,
      diskBytes: entry.resources.diskBytes,
      state: 'contracted',
      history: [{ state: 'contracted', at: this.c.clock.now() }],
    }
    // Each allocation is its own actor (key and inbox); receipts are still signed with the node key.
    this.allocations.launch(this.spawnAllocation(allocationId), record)
    return { allocationId }
  }

  /** `/dms/job/cancel`: the contract's requester stops its allocation; the receipt follows as a result. */
  private async onCancel(msg: Message<JobCancel>): Promise<JobCancelReply> {
    const contractId = msg.payload?.contractId
    for (const rec of await this.allocations.repo.values()) {
      if (rec.contract.terms.contractId !== contractId) continue
      if (rec.contract.terms.requester.peer !== msg.peer)
        throw new RefusedError('NOT_YOUR_JOB', 'this contract belongs to another requester')
      return { stopping: this.allocations.cancel(rec.allocationId) }
    }
    // Not invoked (yet): an invocation racing the cancel must not start a run nobody pays for.
    // Kept only for a peer with a contracted bid here, so a stranger cannot grow the set.
    const contracted = (await this.bids.values()).some(
      (b) => b.state === 'contracted' && b.requester.peer === msg.peer,
    )
    if (typeof contractId === 'string' && contracted) this.cancelled.add(contractId)
    return { stopping: false }
  }
}
