/**
 * `/dms/job/bid-request`: admission (the requester's approval credential and the rate limit per
 * peer, bid-request-gate.ts, which a gossiped request passed before delivery; this provider's own
 * credential), the requester's funds proof against the job's max price, then the capability and
 * policy checks, the per-requester cap (taking over another requester's reservation held over its
 * share, requester-cap.ts), the reservation, the signed bid and its machine (in `reserved`). A quote is judged the same way and answered with a
 * bid that reserved nothing. Spec: specs/protocol.md ("Checks on the receiving side", "Approval").
 */
import type { ProviderEvents } from '../provider-events.js'
import { randomUUID } from 'node:crypto'
import type { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import type { Clock } from '../../../actors/clock.js'
import type { KeyPair } from '../../../actors/identity.js'
import type { Actor, Message } from '../../../actors/system.js'
import { signDoc } from '../../contracts/canonical.js'
import { FundsCache, fundsReason } from '../../contracts/funds.js'
import { DOMAIN, type ApprovalCredential, type Bid } from '../../contracts/model.js'
import { W } from '../../protocol/behaviours.js'
import { handleTooLarge } from '../../protocol/bounds.js'
import type { PriceTerms } from '../../pricing/terms.js'
import type { BidMessage, BidRequest, Decline } from '../../protocol/messages.js'
import type { ResourceLedger } from '../../resources/ledger.js'
import type { MachineInfo, Resources } from '../../resources/types.js'
import {
  imageOfNeeds,
  imagesOfNeeds,
  needsNetwork,
  needsTotals,
  type WorkloadNeeds,
} from '../../workload/needs.js'
import { engineNeedOf } from '../../workload/capabilities.js'
import { artifactName } from '../../workload/artifact-name.js'
import type { BidBook } from '../bid-book.js'
import { acceptJob, compareCapability, declineKind, imageAllowed, type Comparator } from '../capability.js'
import { chooseEngine, noEngineRefusal, type EngineChoice } from '../engine-choice.js'
import { grantedResources } from '../disk-grant.js'
import { gpuAskOf, matchGpus } from '../gpu-match.js'
import { offeredGpuIndices } from '../../resources/gpu-pick.js'
import type { ImageCheck } from '../images.js'
import type { BidRequestGate } from '../bid-request-gate.js'
import { overCap, shareOf, toPreempt, type Preemptible, type RequesterCap } from '../requester-cap.js'
import { flatState } from '../bid-store.js'
import { checkBidRequest } from '../validate.js'
import type { ProviderBooks } from '../books.js'
import { priceBid } from '../billing.js'
import { add, fits, sum } from '../../resources/math.js'
import { holdMs, laterStart, type LaterBids, type SlotTiming } from '../later-bid.js'

/** How often an unavailable container engine is checked again (on the next bid request). */
const ENGINE_RECHECK_MS = 15_000

export interface BidRequestDeps {
  key: KeyPair
  ledger: Pick<ResourceLedger, 'getOffer' | 'free' | 'entries' | 'reserve' | 'slotFor'>
  machine?: { get(): Promise<MachineInfo>; refresh(): Promise<MachineInfo> }
  book: Pick<BidBook, 'openBid' | 'holdings' | 'create' | 'actor' | 'reservedOver' | 'settle'>
  clock: Clock
  log: Logger
  /** This provider's own approval credential (attached to its bids and declines). */
  approval: { current(): ApprovalCredential | undefined }
  peerId: () => string
  /** Hears `bid-request-ignored` (reason) for each request dropped without an answer. */
  events: Pick<EventEmitter<ProviderEvents>, 'emit'>
  /** Judges a request's image before any engine call, then looks it up through a cache. */
  images: Pick<ImageCheck, 'refusal' | 'canRun'>
  /** The approval and rate checks (also the bid-request topic's admission rule). */
  gate: Pick<BidRequestGate, 'judge'>
  /** Unpaid and claimed jobs of a requester here (books.ts). */
  books?: Pick<ProviderBooks, 'unpaidOf'>
  /** Why this provider takes no new job now (paused, draining, drained, stopping), or undefined. */
  mode?: { refusal(): string | undefined }
}

export interface BidRequestInit {
  contractDb: string
  /** How long a bid (and its reservation) stays valid. @default 30000 */
  bidTtlMs?: number
  preferences?: Partial<Comparator>
  requesterCap?: RequesterCap
  /** The disk quota of a job that gives none (disk-grant.ts). */
  defaultDiskBytes?: number
  /** A requester with more unpaid (or claimed) jobs here is declined. @default no limit */
  maxUnpaidJobs?: number
  /** The price this provider bids (specs/pricing.md). @default per hour at the offer's prices */
  price?: PriceTerms
  /** The allocation deadline of each reservation, and bids for a later start (later-bid.ts). */
  slots?: SlotTiming & { later?: LaterBids }
}

/** Declines sent by kind (`declineKind`: never a name a peer chose), requests dropped by reason. */
export interface BidRequestCounters {
  declines: Record<string, number>
  ignored: Record<string, number>
}

export function bidRequestHandler(d: BidRequestDeps, init: BidRequestInit, counts: BidRequestCounters) {
  const funds = new FundsCache()
  const ignore = (reason: string, msg: Message, detail?: unknown): void => {
    counts.ignored[reason] = (counts.ignored[reason] ?? 0) + 1
    d.log.debug({ reason, detail, from: msg.peer }, 'bid request ignored')
    d.events.emit('bid-request-ignored', reason)
  }

  const decline = async (
    actor: Actor,
    msg: Message<BidRequest>,
    reasons: string[],
    own: ApprovalCredential,
  ) => {
    for (const r of reasons) {
      const kind = declineKind(r)
      counts.declines[kind] = (counts.declines[kind] ?? 0) + 1
    }
    d.log.info({ jobId: msg.payload.jobId, reasons }, 'declined bid request')
    const message: Decline = { jobId: msg.payload.jobId, provider: d.peerId(), reasons, approval: own }
    await actor.send(msg.from, W.decline, message).catch(() => {})
  }

  // The engine that runs the job (engine-choice.ts), or why none can; undefined without a
  // measurement. No ready engine: measured again at most every ENGINE_RECHECK_MS, so a provider
  // whose engine comes up later bids again. Why an engine is down (a local path, a command to run)
  // goes to this provider's log, once per measurement; the requester reads only its name.
  let toldAt = -1
  const pickEngine = async (needs: WorkloadNeeds): Promise<EngineChoice | undefined> => {
    if (d.machine === undefined) return undefined
    const need = engineNeedOf(needs)
    let m = await d.machine.get()
    let choice = chooseEngine(m.engines, need)
    if ('refusal' in choice && d.clock.now() - m.measuredAt >= ENGINE_RECHECK_MS) {
      m = await d.machine.refresh()
      choice = chooseEngine(m.engines, need)
    }
    if ('refusal' in choice && choice.unavailable.length > 0 && toldAt !== m.measuredAt) {
      toldAt = m.measuredAt
      for (const e of choice.unavailable)
        d.log.warn({ engine: e.name, why: e.why }, 'engine unavailable: bid requests are declined')
    }
    return choice
  }

  // Releases reservations another requester held over its share, unlocked, and waits until their
  // resources are free. One locked meanwhile is left alone (the reservation then fails, declined).
  const preempt = async (taken: Preemptible[], by: string): Promise<void> => {
    await Promise.all(
      taken.map(async ({ bidId }) => {
        const machine = d.book.actor(bidId)
        if (machine === undefined || flatState(machine.getSnapshot().value) !== 'reserved') return
        machine.send({
          type: 'RELEASE',
          reason:
            "preempted: reserved over its requester's share, not locked, and another requester needed the room",
        })
        await d.book.settle(machine, (s) => s.status !== 'active')
        d.log.info({ bidId, by }, 'reservation over its share preempted')
        d.events.emit('bid-preempted', bidId)
      }),
    )
  }

  /** A pod's images other than the bid's own (its first member's), each once. */
  const podImages = (needs: WorkloadNeeds): string[] =>
    imagesOfNeeds(needs).filter((image) => image !== imageOfNeeds(needs))

  return async (actor: Actor, msg: Message<BidRequest>): Promise<void> => {
    const problem = checkBidRequest(msg.payload)
    if (problem !== undefined) return ignore('malformed', msg, problem)
    // The sender's handle is stored with the bid: bounded like every field of the request.
    if (handleTooLarge(msg.from)) return ignore('malformed', msg, 'sender handle too large')
    // Cheapest check first: a flood from one peer costs a map look-up each, nothing more.
    if (!d.ledger.getOffer()) return // not onboarded: nothing to offer, nothing to say
    // Nothing is reserved (or even looked up) for a requester the contract-db has not approved,
    // nor past a peer's rate. Silent, not declined: an answer would let anyone make every provider
    // send traffic. A gossiped request passed this gate before it was delivered (and forwarded).
    if (msg.via !== 'gossip' && d.gate.judge(msg) !== undefined) return
    const req = msg.payload
    const needs = req.workloadNeeds
    // The bid names the first member's artifact (an image, `runtime:<path>`: artifact-name.ts) and
    // the members' resources added up (a pod's disk too).
    const image = artifactName(needs.members[0].artifact)
    const asked = needsTotals(needs)
    const pod = needs.members.length > 1
    const now = d.clock.now()
    // Without its own credential this provider's bids would be ignored: it stays silent too.
    const own = d.approval.current()
    if (own === undefined) return ignore('not_approved_here', msg)
    if (req.deadline <= now) return ignore('past_deadline', msg)
    const quote = req.quote === true
    // Nothing is reserved for a job its requester cannot pay for (specs/contract-db.md, "Funds
    // proofs"): a valid proof first (here), then one that covers this provider's bid (below, once
    // its total is known). A quote reserves nothing, so it needs no funds.
    const fundsProblem = quote
      ? undefined
      : funds.check(req.funds, { peer: msg.peer, contractDb: init.contractDb, now, need: 0 })
    if (fundsProblem !== undefined) return decline(actor, msg, [fundsReason(fundsProblem, req.funds, 0)], own)
    const offer = d.ledger.getOffer()!
    // A re-published request (the requester heard nothing yet): the same bid again, no new reservation.
    const earlier = quote ? undefined : d.book.openBid(req.jobId, msg.peer)
    if (earlier !== undefined) {
      await actor.send(msg.from, W.bid, { bid: earlier, approval: own }).catch(() => {})
      return
    }
    // The image is judged before anything asks the engine (specs/job-spec.md, "Image references").
    const early =
      offer.withdrawnAt !== undefined
        ? 'offboarded'
        : (d.mode?.refusal() ??
          imagesOfNeeds(needs).reduce<string | undefined>((r, i) => r ?? d.images.refusal(i), undefined))
    const choice = early === undefined ? await pickEngine(needs) : undefined
    const need = engineNeedOf(needs)
    const refusal =
      early ??
      (choice !== undefined && 'refusal' in choice ? choice.refusal : undefined) ??
      // Without a measurement no engine said it runs anything but images; no engine runs a bundle.
      ((choice === undefined && need.artifactKind !== 'image') || need.artifactKind === 'bundle'
        ? noEngineRefusal(need)
        : undefined)
    if (refusal !== undefined) return decline(actor, msg, [refusal], own)
    // The offered GPUs of the model and memory asked (gpu-match.ts); the ledger picks free ones.
    const ask = gpuAskOf(needs)
    const gpus =
      ask === undefined ? undefined : matchGpus(ask, offeredGpuIndices(offer), await d.machine?.get())
    if (gpus !== undefined && 'refusal' in gpus) return decline(actor, msg, [gpus.refusal], own)
    const engine = choice !== undefined && 'engine' in choice ? choice.engine : undefined
    const unpaid = init.maxUnpaidJobs === undefined ? 0 : ((await d.books?.unpaidOf(msg.peer)) ?? 0)
    if (init.maxUnpaidJobs !== undefined && unpaid > init.maxUnpaidJobs)
      return decline(
        actor,
        msg,
        [
          `unpaid jobs: ${unpaid} of this requester's jobs here are unpaid or claimed (max ${init.maxUnpaidJobs})`,
        ],
        own,
      )
    // Priced as the contract-db will lock and bill it (specs/pricing.md).
    const priced = priceBid(init.price ?? offer.prices, asked, req.maxDurationSeconds)
    if (typeof priced === 'string') return decline(actor, msg, [priced], own)
    const { price, total } = priced
    // The escrow this bid would lock: what the requester must be able to pay here (not its max
    // price, a ceiling that a cheaper bid need not reach).
    if (!quote && req.funds !== undefined && req.funds.available < total)
      return decline(actor, msg, [fundsReason('funds_short', req.funds, total)], own)
    const free = d.ledger.free()
    // What the ledger holds: the job's resources, with the default disk quota if it gave none.
    const held = grantedResources(asked, free, init.defaultDiskBytes)
    const slots = init.slots ?? { lockTtlMs: 60_000, provisionTimeoutMs: 300_000 }
    // No room now, but another requester holds more than its share in reservations it has not
    // locked: a request within its own share may take them over (requester-cap.ts).
    const taken =
      quote || fits(held, free)
        ? []
        : (toPreempt({
            want: held,
            free,
            held: d.book.holdings(msg.peer),
            offer: offer.resources,
            cap: init.requesterCap,
            candidates: d.book.reservedOver(shareOf(offer.resources, init.requesterCap), msg.peer),
          }) ?? [])
    const room = add(free, sum(taken.map((t) => t.held)))
    // Not room now: perhaps a later start, judged against the whole offer (later-bid.ts).
    const later = fits(held, room)
      ? undefined
      : laterStart(d.ledger, held, req.maxDurationSeconds, now, slots)
    const decision = acceptJob(
      compareCapability(held, later === undefined ? room : offer.resources),
      {
        ...init.preferences,
        hasImage:
          (need.artifactKind === 'runtime' || imageAllowed(init.preferences?.allowedImages, image)) &&
          (await d.images.canRun(image)),
        price: total,
        maxPrice: req.maxPrice,
        excluded: req.exclude.includes(d.peerId()),
        network: !pod && needsNetwork(needs),
        ...(pod
          ? {
              networkMembers: needs.members.filter((m) => m.network === 'outbound').map((m) => m.name),
              moreImages: await Promise.all(
                podImages(needs).map(async (image) => ({
                  image,
                  hasImage:
                    imageAllowed(init.preferences?.allowedImages, image) && (await d.images.canRun(image)),
                })),
              ),
            }
          : {}),
        requester: msg.peer,
        activeJobs: d.ledger.entries().filter((e) => e.state !== 'reserved').length,
      },
      image,
      req.maxDurationSeconds,
    )
    // A quote holds nothing here: no cap applies to it.
    const capped =
      decision.accept && !quote
        ? overCap(d.book.holdings(msg.peer), held, offer.resources, init.requesterCap)
        : undefined
    if (!decision.accept || capped !== undefined)
      return decline(actor, msg, capped !== undefined ? [capped] : decision.reasons, own)
    const bidId = randomUUID()
    // Not tied to the request's window: a re-published request gets this same bid again, so a
    // loaded requester selecting after several windows would find it lapsed (measured: the first
    // job of the 10-node benchmark failed NO_BIDS, 2 tries of 3, with 10 s after the window).
    const expiresAt = now + (init.bidTtlMs ?? 30_000)
    const offered = { bidId, engine, image, asked, price, total, later, now, expiresAt }
    if (quote) {
      const bid = signBid(d, req, { ...offered, reserved: false })
      d.log.debug({ jobId: req.jobId, total }, 'quote answered')
      await actor.send(msg.from, W.bid, { bid, approval: own }).catch(() => {})
      return
    }
    if (taken.length > 0) await preempt(taken, msg.peer)
    try {
      const until = (later ?? now) + holdMs(req.maxDurationSeconds, slots)
      await d.ledger.reserve(
        bidId,
        req.jobId,
        held,
        expiresAt,
        { start: later, until },
        gpus === undefined ? {} : { eligible: gpus.eligible },
      )
    } catch (err) {
      return decline(actor, msg, [(err as Error).message], own)
    }
    const bid = signBid(d, req, { ...offered, reserved: true })
    // The credential and the funds proof are checked and not stored: the request is kept without them.
    const { approval: _credential, funds: _funds, ...request } = req
    const machine = await d.book.create({ bid, request, requester: msg.from, held, history: [] })
    d.log.info({ jobId: req.jobId, bidId, total }, 'bid sent')
    const message: BidMessage = { bid, approval: own }
    await actor.send(msg.from, W.bid, message).catch((err: unknown) => {
      d.log.warn({ err, jobId: req.jobId }, 'bid not delivered; reservation released')
      machine.send({ type: 'RELEASE', reason: 'the bid could not be delivered' })
    })
  }
}

/** The bid for `req`, signed, so the contract that embeds it can be checked against it by the contract-db. */
function signBid(
  d: Pick<BidRequestDeps, 'key' | 'peerId' | 'ledger'>,
  req: BidRequest,
  b: {
    bidId: string
    engine: string | undefined
    image: string
    /** The members' resources added up. */
    asked: Resources
    price: PriceTerms
    total: number
    later?: number
    now: number
    expiresAt: number
    reserved: boolean
  },
): Bid {
  const start = b.later ?? b.now
  const body: Omit<Bid, 'signature'> = {
    bidId: b.bidId,
    jobId: req.jobId,
    provider: d.peerId(),
    resources: b.asked,
    image: b.image,
    ...(b.engine !== undefined ? { engine: b.engine } : {}),
    maxDurationSeconds: req.maxDurationSeconds,
    price: b.price,
    total: b.total,
    earliestStart: start,
    expectedFinish: start + req.maxDurationSeconds * 1000,
    expiresAt: b.expiresAt,
    resourcesReserved: b.reserved,
  }
  return { ...body, signature: signDoc(d.key, DOMAIN.bid, body) }
}
