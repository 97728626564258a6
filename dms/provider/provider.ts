import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { Handle } from '../../actors/envelope.js'
import { RefusedError } from '../../actors/errors.js'
import { KeyPair, keyToString } from '../../actors/identity.js'
import type { Actor, ActorSystem, Message } from '../../actors/system.js'
import { hashDoc, signDoc, verifyDoc } from '../contracts/canonical.js'
import { DOMAIN } from '../contracts/model.js'
import { partyIsConsistent, publicKeyOfPeer } from '../contracts/party.js'
import type { Executor } from '../executor/executor.js'
import {
  B,
  BID_REQUEST_TOPIC,
  INBOX,
  allocationInbox,
  type Bid,
  type BidRelease,
  type BidRequest,
  type ContractSignReply,
  type ContractSignRequest,
  type Decline,
  type Invocation,
  type InvocationReply,
  type JobCancel,
  type JobCancelReply,
  type JobRequest,
  type JobRequestReply,
} from '../messages.js'
import type { ResourceLedger } from '../resources/ledger.js'
import { DIMENSIONS } from '../resources/math.js'
import type { MachineInfo, Resources } from '../resources/types.js'
import { Repo, type Db } from '../store/db.js'
import type { BlobService } from '../blobs/service.js'
import { AllocationRunner, type RecoverySummary, type AllocationRecord } from './allocation.js'
import { acceptJob, compareCapability, declineKind, imageAllowed, type Comparator } from './capability.js'
import { ImageCheck, type ImageCheckInit } from './images.js'
import { pricePerHour, totalFor } from './pricing.js'
import { checkBidRequest, invocationProblem } from './validate.js'
import { grantedResources } from './disk-grant.js'

/** How often an unavailable container engine is checked again (on the next bid request). */
const ENGINE_RECHECK_MS = 15_000

/** A bid this provider made, with what it needs to honour it. */
export interface BidRecord {
  bid: Bid
  request: BidRequest
  requester: Handle
  /** `released`: the requester locked another bid and said so (`/dms/job/bid-release`). */
  state: 'offered' | 'locked' | 'contracted' | 'invoked' | 'expired' | 'released'
  contractHash?: string
}

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
}

/**
 * The provider role: answers bid requests it can serve with priced bids, locks on job request,
 * countersigns contracts, and turns invocations into allocations.
 */
export class ProviderService {
  private actor?: Actor
  private sweeper?: NodeJS.Timeout
  readonly bids: Repo<BidRecord>
  /** `bid-released` (bidId): a losing bid's reservation was freed early. For tests and metrics. */
  readonly events = new EventEmitter()
  readonly allocations: AllocationRunner
  /** Bid requests' images: refused before any engine call, else looked up through a cache. */
  readonly images: ImageCheck
  /** Declines made, by reason, for metrics and `dms resources`. */
  readonly declines: Record<string, number> = {}
  /** Open bids by job, so a re-published bid request gets the same bid. */
  private readonly offered = new Map<string, { bid: Bid; expiresAt: number; requester: string }>()
  /** Contracts cancelled before their invocation arrived: the invocation is then refused. */
  private readonly cancelled = new Set<string>()

  constructor(
    private readonly c: ProviderComponents,
    private readonly init: ProviderInit,
  ) {
    this.bids = new Repo(c.db, 'provider-bids')
    this.allocations = new AllocationRunner(c, { heartbeatMs: init.heartbeatMs })
    this.images = new ImageCheck(c, init.images)
  }

  get peerId(): string {
    return this.c.system.peerId
  }

  /** What `start` found left by an earlier process (re-attached, restarted, lost, orphans removed). */
  recovered?: RecoverySummary

  /** Starts answering bid requests, then recovers allocations an earlier process left unfinished. */
  async start(): Promise<void> {
    if (this.actor !== undefined) return
    this.actor = this.c.system
      .spawn(INBOX.provider, this.c.key)
      .subscribe(BID_REQUEST_TOPIC)
      .on(B.bidRequest, (m) => this.onBidRequest(m as Message<BidRequest>))
      .on(B.jobRequest, (m) => this.onJobRequest(m as Message<JobRequest>))
      .on(B.contractSign, (m) => this.onContractSign(m as Message<ContractSignRequest>))
      .on(B.invoke, (m) => this.onInvoke(m as Message<Invocation>))
      .on(B.cancel, (m) => this.onCancel(m as Message<JobCancel>))
      .on(B.bidRelease, (m) => this.onBidRelease(m as Message<BidRelease>))
      .on(B.settled, () => undefined)
    this.sweeper = setInterval(() => void this.sweep(), this.init.sweepIntervalMs ?? 5000)
    this.sweeper.unref()
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
    clearInterval(this.sweeper)
    this.actor?.stop()
    this.actor = undefined
    await this.allocations.stop()
  }

  private async onBidRequest(msg: Message<BidRequest>): Promise<void> {
    const problem = checkBidRequest(msg.payload)
    if (problem !== undefined) {
      this.c.log.debug({ problem, from: msg.peer }, 'malformed bid request ignored')
      return
    }
    const req = msg.payload
    const now = this.c.clock.now()
    if (req.deadline <= now) return
    const offer = this.c.ledger.getOffer()
    if (offer === undefined) return // not onboarded: nothing to offer, nothing to say
    const actor = this.actor as Actor
    // A re-published request (the requester heard nothing yet): the same bid again, no new reservation.
    const earlier = this.offered.get(req.jobId)
    if (earlier !== undefined && earlier.expiresAt > now && earlier.requester === msg.peer) {
      await actor.send(msg.from, B.bid, earlier.bid).catch(() => {})
      return
    }
    // The image is judged before anything asks the engine (specs/job-spec.md, "Image references").
    const refusal =
      offer.withdrawnAt !== undefined
        ? 'offboarded'
        : (this.images.refusal(req.image) ?? (await this.engineProblem()))
    if (refusal !== undefined) {
      this.countDecline(refusal)
      this.c.log.info({ jobId: req.jobId, reason: refusal }, 'declined bid request')
      const decline: Decline = { jobId: req.jobId, provider: this.peerId, reasons: [refusal] }
      await actor.send(msg.from, B.decline, decline).catch(() => {})
      return
    }
    const perHour = pricePerHour(req.resources, offer.prices)
    const total = totalFor(perHour, req.maxDurationSeconds, offer.prices)
    const free = this.c.ledger.free()
    // What the ledger holds: the job's resources, with the default disk quota if it gave none.
    const held = grantedResources(req.resources, free, this.init.defaultDiskBytes)
    const comparison = compareCapability(held, free)
    const decision = acceptJob(
      comparison,
      {
        ...this.init.preferences,
        hasImage:
          imageAllowed(this.init.preferences?.allowedImages, req.image) &&
          (await this.images.canRun(req.image)),
        price: total,
        maxPrice: req.maxPrice,
        excluded: req.exclude.includes(this.peerId),
        requester: msg.peer,
        activeJobs: this.c.ledger.entries().filter((e) => e.state !== 'reserved').length,
      },
      req.image,
      req.maxDurationSeconds,
    )
    if (!decision.accept) {
      for (const r of decision.reasons) this.countDecline(r)
      this.c.log.info({ jobId: req.jobId, reasons: decision.reasons }, 'declined bid request')
      const decline: Decline = { jobId: req.jobId, provider: this.peerId, reasons: decision.reasons }
      await actor.send(msg.from, B.decline, decline).catch(() => {})
      return
    }
    const bidId = randomUUID()
    const expiresAt = now + (this.init.bidTtlMs ?? 30_000)
    try {
      await this.c.ledger.reserve(bidId, req.jobId, held, expiresAt)
    } catch (err) {
      const decline: Decline = { jobId: req.jobId, provider: this.peerId, reasons: [(err as Error).message] }
      await actor.send(msg.from, B.decline, decline).catch(() => {})
      return
    }
    const body: Omit<Bid, 'signature'> = {
      bidId,
      jobId: req.jobId,
      provider: this.peerId,
      resources: req.resources,
      image: req.image,
      maxDurationSeconds: req.maxDurationSeconds,
      pricePerHour: perHour,
      minJobPrice: offer.prices.minJobPrice,
      total,
      earliestStart: now,
      expectedFinish: now + req.maxDurationSeconds * 1000,
      expiresAt,
      resourcesReserved: true,
      fit: fitOf(held, comparison.margins, free),
    }
    // Signed, so the contract that embeds it can be checked against it by the contract-db.
    const bid: Bid = { ...body, signature: signDoc(this.c.key, DOMAIN.bid, body) }
    await this.bids.put(bidId, { bid, request: req, requester: msg.from, state: 'offered' })
    this.offered.set(req.jobId, { bid, expiresAt, requester: msg.peer })
    for (const [jobId, o] of this.offered) if (o.expiresAt <= now) this.offered.delete(jobId)
    this.c.log.info({ jobId: req.jobId, bidId, total }, 'bid sent')
    await actor.send(msg.from, B.bid, bid).catch(async (err: unknown) => {
      this.c.log.warn({ err, jobId: req.jobId }, 'bid not delivered; reservation released')
      this.offered.delete(req.jobId)
      await this.c.ledger.release(bidId)
    })
  }

  private countDecline(reason: string): void {
    const kind = declineKind(reason)
    this.declines[kind] = (this.declines[kind] ?? 0) + 1
  }

  /**
   * Why the container engine cannot run jobs, or undefined when it can. An unavailable engine is
   * measured again at most every `ENGINE_RECHECK_MS`, so a provider whose Docker comes up later
   * starts bidding without a restart.
   */
  private async engineProblem(): Promise<string | undefined> {
    const meter = this.c.machine
    if (meter === undefined) return undefined
    let m = await meter.get()
    if (!m.docker.available && this.c.clock.now() - m.measuredAt >= ENGINE_RECHECK_MS)
      m = await meter.refresh()
    return m.docker.available ? undefined : `docker unavailable: ${m.docker.error ?? 'unknown reason'}`
  }

  /**
   * A bid that lost: its reservation is freed now rather than at the bid's expiry, so the
   * resources can serve the next request. Only the bid's requester can release it, and only
   * while it is merely offered.
   */
  private async onBidRelease(msg: Message<BidRelease>): Promise<void> {
    const rec = typeof msg.payload?.bidId === 'string' ? await this.bids.get(msg.payload.bidId) : undefined
    if (rec === undefined || rec.requester.peer !== msg.peer || rec.bid.jobId !== msg.payload.jobId) return
    if (rec.state !== 'offered') return
    await this.c.ledger.release(rec.bid.bidId)
    await this.bids.put(rec.bid.bidId, { ...rec, state: 'released' })
    // A later round for the same job (a re-bid after a fault) gets a fresh bid, not this one.
    if (this.offered.get(rec.bid.jobId)?.bid.bidId === rec.bid.bidId) this.offered.delete(rec.bid.jobId)
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
    return { locked: true, lockedUntil: this.c.clock.now() + (this.init.lockTtlMs ?? 60_000) }
  }

  private async onContractSign(msg: Message<ContractSignRequest>): Promise<ContractSignReply> {
    const contract = msg.payload?.contract
    const t = contract?.terms
    if (t === undefined) throw new RefusedError('BAD_TERMS', 'no contract terms')
    const rec = await this.mine(t.bidId, msg)
    if (rec.state !== 'locked') throw new RefusedError('BID_NOT_LOCKED', `bid is ${rec.state}`)
    const { bid, request } = rec
    const mismatch =
      t.jobId !== bid.jobId ||
      t.provider.peer !== this.peerId ||
      t.provider.publicKey !== keyToString(this.c.key.publicKey) ||
      t.requester.peer !== msg.peer ||
      !partyIsConsistent(t.requester) ||
      t.contractDb !== this.init.contractDb ||
      t.pricePerHour !== bid.pricePerHour ||
      t.maxDurationSeconds !== request.maxDurationSeconds ||
      t.image !== request.image ||
      hashDoc(t.resources) !== hashDoc(request.resources) ||
      hashDoc(t.bid) !== hashDoc(bid) ||
      t.escrow !== bid.total
    if (mismatch) throw new RefusedError('TERMS_MISMATCH', 'contract terms do not match the bid')
    const publicKey = publicKeyOfPeer(t.requester.peer) as Uint8Array
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

/** The smallest share of free capacity the job leaves, over the resources it asks for (Bid.fit). */
function fitOf(required: Resources, margins: Resources, free: Resources): number {
  const shares = DIMENSIONS.filter((d) => required[d] > 0 && free[d] > 0).map((d) => margins[d] / free[d])
  return shares.length === 0 ? 1 : Math.round(Math.min(...shares) * 1000) / 1000
}
