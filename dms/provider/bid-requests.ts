/**
 * The provider's answer to `/dms/job/bid-request`: admission (rate limit per peer, the
 * requester's approval credential, this provider's own), then the capability and policy checks,
 * the per-requester reservation cap, the reservation and the signed bid. Spec:
 * specs/protocol.md ("Checks on the receiving side", "Approval").
 */
import { randomUUID } from 'node:crypto'
import type { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { Handle } from '../../actors/envelope.js'
import type { KeyPair } from '../../actors/identity.js'
import type { Actor, Message } from '../../actors/system.js'
import { handleTooLarge } from '../protocol/bounds.js'
import { checkApproval } from '../contracts/approval.js'
import { signDoc } from '../contracts/canonical.js'
import { DOMAIN, type ApprovalCredential, type Bid } from '../contracts/model.js'
import { W } from '../protocol/behaviours.js'
import { REQUESTER_CAP_REASON, type BidMessage, type BidRequest, type Decline } from '../protocol/messages.js'
import type { ResourceLedger } from '../resources/ledger.js'
import { add, DIMENSIONS, sum } from '../resources/math.js'
import type { MachineInfo, Resources } from '../resources/types.js'
import type { Repo } from '../store/db.js'
import { acceptJob, compareCapability, declineKind, imageAllowed, type Comparator } from './capability.js'
import { grantedResources } from './disk-grant.js'
import type { ImageCheck } from './images.js'
import { pricePerHour, totalFor } from './pricing.js'
import { PeerRateLimiter, type PeerRateLimitInit } from './rate-limit.js'
import { checkBidRequest } from './validate.js'

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

/** How much one requester may hold in open reservations here (specs/config.md). */
export interface RequesterCap {
  /** Share of the offer (each resource) one requester's open reservations may add up to. @default 0.5 */
  maxReservedShare?: number
  /** Open (reserved, not yet locked) bids one requester may hold. @default 100 */
  maxOpenBids?: number
}

export interface BidResponderComponents {
  key: KeyPair
  ledger: ResourceLedger
  machine?: { get(): Promise<MachineInfo>; refresh(): Promise<MachineInfo> }
  bids: Repo<BidRecord>
  clock: Clock
  log: Logger
  /** This provider's own approval credential (attached to its bids and declines). */
  approval: { current(): ApprovalCredential | undefined }
  peerId: () => string
  /** Hears `bid-request-ignored` (reason) for each request dropped without an answer. */
  events: EventEmitter
  /** Judges a request's image before any engine call, then looks it up through a cache. */
  images: Pick<ImageCheck, 'refusal' | 'canRun'>
}

export interface BidResponderInit {
  contractDb: string
  bidTtlMs?: number
  preferences?: Partial<Comparator>
  requesterCap?: RequesterCap
  bidRequestRate?: PeerRateLimitInit
  /** The disk quota of a job that gives none (disk-grant.ts). */
  defaultDiskBytes?: number
}

export class BidResponder {
  /** Declines sent, by kind (`declineKind`: never a name a peer chose). */
  readonly declines: Record<string, number> = {}
  /** Bid requests dropped without an answer, by reason (`dms_provider_bid_requests_ignored_total`). */
  readonly ignored: Record<string, number> = {}
  /** Open bids by job, so a re-published bid request gets the same bid. */
  private readonly offered = new Map<string, { bid: Bid; expiresAt: number; requester: string }>()
  /** The requester of each open reservation (ledger id = bid id), for the per-requester cap. */
  private readonly reservedBy = new Map<string, string>()
  private readonly rate: PeerRateLimiter

  constructor(
    private readonly c: BidResponderComponents,
    private readonly init: BidResponderInit,
  ) {
    this.rate = new PeerRateLimiter(c.clock, init.bidRequestRate)
  }

  /** Rebuilds the requesters of open reservations after a restart. */
  async start(): Promise<void> {
    for (const rec of await this.c.bids.values())
      if (rec.state === 'offered') this.reservedBy.set(rec.bid.bidId, rec.requester.peer)
  }

  /** The bid for `jobId` was released or locked: a later round gets a fresh bid. */
  forget(jobId: string, bidId: string): void {
    if (this.offered.get(jobId)?.bid.bidId === bidId) this.offered.delete(jobId)
    this.reservedBy.delete(bidId)
  }

  private ignore(reason: string, msg: Message, detail?: unknown): void {
    this.ignored[reason] = (this.ignored[reason] ?? 0) + 1
    this.c.log.debug({ reason, detail, from: msg.peer }, 'bid request ignored')
    this.c.events.emit('bid-request-ignored', reason)
  }

  async handle(actor: Actor, msg: Message<BidRequest>): Promise<void> {
    const problem = checkBidRequest(msg.payload)
    if (problem !== undefined) return this.ignore('malformed', msg, problem)
    // The sender's handle is stored with the bid: bounded like every field of the request.
    if (handleTooLarge(msg.from)) return this.ignore('malformed', msg, 'sender handle too large')
    // Cheapest check first: a flood from one peer costs a map look-up each, nothing more.
    if (!this.c.ledger.getOffer()) return // not onboarded: nothing to offer, nothing to say
    if (!this.rate.take(msg.peer)) return this.ignore('rate_limited', msg)
    const req = msg.payload
    const now = this.c.clock.now()
    // Nothing is reserved (or even looked up) for a requester the contract-db has not approved.
    // Silent, not declined: an answer would let anyone make every provider send traffic.
    const approval = checkApproval(req.approval, { peer: msg.peer, contractDb: this.init.contractDb, now })
    if (approval !== undefined) return this.ignore(approval, msg)
    // Without its own credential this provider's bids would be ignored: it stays silent too.
    const own = this.c.approval.current()
    if (own === undefined) return this.ignore('not_approved_here', msg)
    if (req.deadline <= now) return this.ignore('past_deadline', msg)
    const offer = this.c.ledger.getOffer()!
    // A re-published request (the requester heard nothing yet): the same bid again, no new reservation.
    const earlier = this.offered.get(req.jobId)
    if (earlier !== undefined && earlier.expiresAt > now && earlier.requester === msg.peer) {
      await actor.send(msg.from, W.bid, { bid: earlier.bid, approval: own }).catch(() => {})
      return
    }
    // The image is judged before anything asks the engine (specs/job-spec.md, "Image references").
    const refusal =
      offer.withdrawnAt !== undefined
        ? 'offboarded'
        : (this.c.images.refusal(req.image) ?? (await this.engineProblem()))
    if (refusal !== undefined) return this.decline(actor, msg, [refusal], own)
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
          (await this.c.images.canRun(req.image)),
        price: total,
        maxPrice: req.maxPrice,
        excluded: req.exclude.includes(this.c.peerId()),
        requester: msg.peer,
        activeJobs: this.c.ledger.entries().filter((e) => e.state !== 'reserved').length,
      },
      req.image,
      req.maxDurationSeconds,
    )
    const capped = decision.accept ? this.overCap(msg.peer, held, offer.resources) : undefined
    if (!decision.accept || capped !== undefined)
      return this.decline(actor, msg, capped !== undefined ? [capped] : decision.reasons, own)
    const bidId = randomUUID()
    const expiresAt = now + (this.init.bidTtlMs ?? 30_000)
    try {
      await this.c.ledger.reserve(bidId, req.jobId, held, expiresAt)
    } catch (err) {
      return this.decline(actor, msg, [(err as Error).message], own)
    }
    const body: Omit<Bid, 'signature'> = {
      bidId,
      jobId: req.jobId,
      provider: this.c.peerId(),
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
    }
    // Signed, so the contract that embeds it can be checked against it by the contract-db.
    const bid: Bid = { ...body, signature: signDoc(this.c.key, DOMAIN.bid, body) }
    // The credential is checked and not stored: the request is kept without it.
    const { approval: _credential, ...request } = req
    await this.c.bids.put(bidId, { bid, request, requester: msg.from, state: 'offered' })
    this.reservedBy.set(bidId, msg.peer)
    this.offered.set(req.jobId, { bid, expiresAt, requester: msg.peer })
    for (const [jobId, o] of this.offered) if (o.expiresAt <= now) this.offered.delete(jobId)
    this.c.log.info({ jobId: req.jobId, bidId, total }, 'bid sent')
    const message: BidMessage = { bid, approval: own }
    await actor.send(msg.from, W.bid, message).catch(async (err: unknown) => {
      this.c.log.warn({ err, jobId: req.jobId }, 'bid not delivered; reservation released')
      this.forget(req.jobId, bidId)
      await this.c.ledger.release(bidId)
    })
  }

  private async decline(
    actor: Actor,
    msg: Message<BidRequest>,
    reasons: string[],
    approval: ApprovalCredential,
  ): Promise<void> {
    for (const r of reasons) {
      const kind = declineKind(r)
      this.declines[kind] = (this.declines[kind] ?? 0) + 1
    }
    this.c.log.info({ jobId: msg.payload.jobId, reasons }, 'declined bid request')
    const decline: Decline = { jobId: msg.payload.jobId, provider: this.c.peerId(), reasons, approval }
    await actor.send(msg.from, W.decline, decline).catch(() => {})
  }

  /**
   * Why `requester` may not reserve `want` more, or undefined: at most `maxOpenBids` open
   * reservations, adding up to at most `maxReservedShare` of the offer in every resource. A
   * requester holding nothing here may always reserve one, so a job as large as the offer can
   * still get a bid.
   */
  private overCap(requester: string, want: Resources, offer: Resources): string | undefined {
    const live = new Map(
      this.c.ledger
        .entries()
        .filter((e) => e.state === 'reserved')
        .map((e) => [e.id, e]),
    )
    for (const id of this.reservedBy.keys()) if (!live.has(id)) this.reservedBy.delete(id)
    const mine = [...this.reservedBy].filter(([, peer]) => peer === requester).map(([id]) => live.get(id)!)
    if (mine.length === 0) return undefined
    const maxOpen = this.init.requesterCap?.maxOpenBids ?? 100
    if (mine.length >= maxOpen)
      return `${REQUESTER_CAP_REASON} ${mine.length} open bids held here, at most ${maxOpen} per requester`
    const share = this.init.requesterCap?.maxReservedShare ?? 0.5
    const after = add(sum(mine.map((e) => e.resources)), want)
    const over = DIMENSIONS.find((d) => after[d] > offer[d] * share + 1e-9)
    if (over === undefined) return undefined
    return `${REQUESTER_CAP_REASON} ${over} reserved for this requester would be ${after[over]} of ${offer[over]} offered, at most ${Math.round(share * 100)}% per requester`
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
}
