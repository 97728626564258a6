/**
 * Hand-made market peers for security tests: a raw libp2p peer with an actor system (no DmsNode)
 * that bids or publishes bid requests exactly as the test says, with or without an approval
 * credential. Payloads are encoded straight with the protobuf messages, so a credential travels
 * only where the receiver's schema has a field for it.
 */
import type { Handle } from '../../actors/envelope.js'
import type { Actor, Message } from '../../actors/system.js'
import { canonicalJson } from '../../actors/canonical-json.js'
import { signDoc } from '../../dms/contracts/canonical.js'
import {
  DOMAIN,
  type ApprovalCredential,
  type Bid,
  type ContractTerms,
  type FundsProof,
  type Role,
} from '../../dms/contracts/model.js'
import { escrowFor } from '../../dms/contracts/money.js'
import { W } from '../../dms/protocol/behaviours.js'
import { BID_REQUEST_TOPIC, handleOf, INBOX } from '../../dms/protocol/handles.js'
import type { BidRequest } from '../../dms/protocol/messages.js'
import * as P from '../../proto/dms.js'
import type { TestNetwork } from './network.js'
import { startPeer, type PeerInit, type TestPeer } from './peers.js'
import { plainNeeds } from './needs.js'
import { imageOfNeeds } from '../../dms/workload/needs.js'
import { workloadTotals } from '../../dms/workload/workload.js'

const enc = new TextEncoder()
const json = (doc: unknown) => enc.encode(canonicalJson(doc))

/** A peer whose bids and bid requests carry what the test gives them, encoded as protobuf. */
export async function startRogue(bootstrap: string[], init: PeerInit = {}): Promise<TestPeer> {
  const peer = await startPeer(bootstrap, init)
  const codecs = peer.system.codecs
  const bid = codecs.codecFor(W.bid.name)
  codecs.register(W.bid.name, {
    request: {
      encode: (v: { bid: Bid; approval?: ApprovalCredential }) =>
        P.Bid.encode({ bid: json(v.bid), ...(v.approval ? { approval: json(v.approval) } : {}) }),
      decode: (b) => bid.decode(b),
    },
  })
  const request = codecs.codecFor(W.bidRequest.name)
  codecs.register(W.bidRequest.name, {
    request: {
      encode: ({ approval, funds, workloadNeeds, ...v }: BidRequest) =>
        P.BidRequest.encode({
          ...v,
          workloadNeeds: json(workloadNeeds),
          ...(approval ? { approval: json(approval) } : {}),
          ...(funds ? { funds: json(funds) } : {}),
        }),
      decode: (b) => request.decode(b),
    },
  })
  return peer
}

export interface RogueBidOptions {
  /** @default 0 (a volunteer bid: price 0, minimum 0) */
  pricePerHour?: number
  approval?: ApprovalCredential
  /** @default a UUID-like id */
  bidId?: string
  /** The start it claims. @default an hour ago (a lie: it cannot start before now) */
  earliestStart?: number
}

/**
 * A provider actor on `peer` that bids on every bid request (signed by its own key, so the bid
 * itself is valid), then locks and countersigns whatever it is asked: a peer that plays along up
 * to the contract-db.
 */
export function rogueProvider(
  peer: TestPeer,
  opts: RogueBidOptions | ((req: BidRequest) => RogueBidOptions) = {},
): { actor: Actor; requests: BidRequest[] } {
  const requests: BidRequest[] = []
  const actor = peer.system.spawn(INBOX.provider, peer.key)
  actor
    .subscribe(BID_REQUEST_TOPIC)
    .on(W.bidRequest, async (m: Message) => {
      const req = m.payload as BidRequest
      requests.push(req)
      const o = typeof opts === 'function' ? opts(req) : opts
      const now = Date.now()
      const pricePerHour = o.pricePerHour ?? 0
      const body: Omit<Bid, 'signature'> = {
        bidId: o.bidId ?? `rogue-${requests.length}-${req.jobId.slice(0, 8)}`,
        jobId: req.jobId,
        provider: peer.system.peerId,
        resources: workloadTotals(req.workloadNeeds),
        image: imageOfNeeds(req.workloadNeeds)!,
        maxDurationSeconds: req.maxDurationSeconds,
        pricePerHour,
        minJobPrice: 0,
        total: escrowFor(pricePerHour, req.maxDurationSeconds, 0),
        earliestStart: o.earliestStart ?? now - 3_600_000,
        expectedFinish: (o.earliestStart ?? now - 3_600_000) + 1,
        expiresAt: now + 30_000,
        resourcesReserved: true,
      }
      const bid: Bid = { ...body, signature: signDoc(peer.key, DOMAIN.bid, body) }
      await actor.send(m.from, W.bid, { bid, ...(o.approval ? { approval: o.approval } : {}) })
    })
    .on(W.jobRequest, () => ({ locked: true, lockedUntil: Date.now() + 60_000 }))
    .on(W.contractSign, (m: Message) => {
      const terms = (m.payload as { contract: { terms: ContractTerms } }).contract.terms
      return { providerSignature: signDoc(peer.key, DOMAIN.contract, terms) }
    })
  return { actor, requests }
}

/** An actor on `peer` that publishes bid requests and collects the answers it gets. */
export function rogueRequester(peer: TestPeer, inbox = 'job/rogue') {
  const answers: Array<{ kind: 'bid' | 'decline'; jobId: string; reasons?: string[]; bid?: Bid }> = []
  const waiters = new Set<() => void>()
  const notify = () => waiters.forEach((w) => w())
  const actor = peer.system
    .spawn(inbox, peer.key)
    .on(W.bid, (m: Message) => {
      const p = m.payload as { bid?: Bid } & Partial<Bid>
      answers.push({ kind: 'bid', jobId: (p.bid ?? p).jobId as string, ...(p.bid ? { bid: p.bid } : {}) })
      notify()
    })
    .on(W.decline, (m: Message) => {
      const d = m.payload as { jobId: string; reasons: string[] }
      answers.push({ kind: 'decline', jobId: d.jobId, reasons: d.reasons })
      notify()
    })
  return {
    actor,
    answers,
    /** Resolves once `n` answers (bids and declines) have come. */
    answered(n: number): Promise<void> {
      return new Promise((resolve) => {
        const check = () => {
          if (answers.length < n) return
          waiters.delete(check)
          resolve()
        }
        waiters.add(check)
        check()
      })
    },
    publish(req: BidRequest): Promise<void> {
      return actor.publish(BID_REQUEST_TOPIC, W.bidRequest, req, 60_000)
    },
    handle(): Handle {
      return actor.handle
    },
  }
}

/** What a rogue requester is credited with (`approvedRogueRequester`): `bidRequest`'s max price. */
export const ROGUE_FUNDS = 1_000_000

/** A bid request as a requester would publish it (with its funds proof, when given). */
export function bidRequest(
  jobId: string,
  cpu: number,
  approval?: ApprovalCredential,
  funds?: FundsProof,
): BidRequest {
  return {
    jobId,
    workloadNeeds: plainNeeds(process.env.DMS_TEST_IMAGE ?? 'dms-test:1', {
      cpu,
      memoryBytes: 16 * 1024 * 1024,
    }),
    maxDurationSeconds: 60,
    maxPrice: ROGUE_FUNDS,
    deadline: Date.now() + 60_000,
    exclude: [],
    ...(approval ? { approval } : {}),
    ...(funds ? { funds } : {}),
  }
}

/** Resolves once `provider` has dropped `n` bid requests (any reason) without an answer. */
export function ignoredRequests(provider: { events: NodeJS.EventEmitter }, n: number): Promise<void> {
  let seen = 0
  return new Promise((resolve) => {
    const on = () => {
      if (++seen < n) return
      provider.events.off('bid-request-ignored', on)
      resolve()
    }
    provider.events.on('bid-request-ignored', on)
  })
}

/**
 * A rogue requester approved at `net`'s contract-db (as `roles`, default requester and provider)
 * and in the bid topic of its first provider, credited with `fund` (default ROGUE_FUNDS): its
 * peer, its approval credential and funds proof, its job actor and the provider's handle.
 */
export async function approvedRogueRequester(net: TestNetwork, opts: { fund?: number; roles?: Role[] } = {}) {
  const provider = net.providers[0]
  const rogue = await startRogue(provider.addrs())
  await rogue.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)
  const peer = rogue.system.peerId
  await net.contractDb.service.approve(peer, opts.roles)
  const fund = opts.fund ?? ROGUE_FUNDS
  if (fund > 0) await net.contractDb.service.credit(peer, fund)
  const approval = await net.contractDb.service.approvalFor(peer)
  // A peer approved without the requester role gets no funds proof (PARTY_ROLE_NOT_APPROVED).
  const funds = await net.contractDb.service.fundsFor(peer).catch(() => undefined)
  const to = handleOf(provider.peerId, INBOX.provider, provider.addrs())
  return { provider, rogue, approval, funds, r: rogueRequester(rogue), to }
}
