/**
 * Every DMS behaviour, typed: its name, its request payload, its reply (for request/reply ones)
 * and their codecs. The only way DMS code sends or handles a message:
 * `actor.on(W.bid, (m) => ...)` gets a `Message<BidMessage>`, `actor.request(h, W.jobRequest,
 * req)` checks `req` and resolves with a JobRequestReply. Spec: specs/protocol.md ("Behaviours").
 */
import type { Message } from '../../actors/actor.js'
import {
  CodecRegistry,
  defineBehaviour,
  type BehaviourCodecs,
  type BehaviourDef,
  type PayloadCodec,
} from '../../actors/codec.js'
import type {
  ApprovalCredential,
  ContractProof,
  FundsProof,
  Settlement,
  StartAck,
} from '../contracts/model.js'
import type { Chunk, ChunkRequest } from './blob-payloads.js'
import { PAYLOAD_CODECS as C, refusalOf, type PayloadRefusal } from './codecs.js'
import type {
  ApprovalRequest,
  BalanceReply,
  BalanceRequest,
  FundsRequest,
  BidMessage,
  BidRelease,
  BidRequest,
  BlobRelease,
  BlobReleaseReply,
  CapacityNews,
  ContractSignReply,
  ContractSignRequest,
  ContractVerifyRequest,
  Decline,
  Invocation,
  InvocationReply,
  JobCancel,
  JobCancelReply,
  JobLog,
  JobRequest,
  JobRequestReply,
  JobResult,
  JobUpdate,
  ResultRequest,
  SettleRequest,
  StartNoteRequest,
  TerminateRequest,
} from './messages.js'

export const W = {
  /** Gossip, requester -> providers: what a job needs; answered with a bid or a decline. */
  bidRequest: defineBehaviour<BidRequest>('/dms/job/bid-request', { request: C.bidRequest }),
  /**
   * Requester -> a chosen provider's inbox, over the direct stream (push orchestration): the same
   * bid request, answered the same way; never on gossip.
   */
  directBidRequest: defineBehaviour<BidRequest>('/dms/job/bid-request-direct', { request: C.bidRequest }),
  /** Provider -> the job's inbox: a signed bid. */
  bid: defineBehaviour<BidMessage>('/dms/job/bid', { request: C.bid }),
  /** Provider -> the job's inbox: why it does not bid. */
  decline: defineBehaviour<Decline>('/dms/job/decline', { request: C.decline }),
  /** Requester -> provider: lock the reserved resources of a bid. */
  jobRequest: defineBehaviour<JobRequest, JobRequestReply>('/dms/job/request', {
    request: C.jobRequest,
    reply: C.jobRequestReply,
  }),
  /** Requester -> provider: countersign the contract. */
  contractSign: defineBehaviour<ContractSignRequest, ContractSignReply>('/dms/contract/sign', {
    request: C.contractRequest,
    reply: C.contractSignReply,
  }),
  /** Requester -> contract-db: verify both signatures, lock the escrow, return the proof. */
  contractVerify: defineBehaviour<ContractVerifyRequest, ContractProof>('/dms/contract/verify', {
    request: C.contractRequest,
    reply: C.contractProof,
  }),
  /**
   * Provider -> contract-db: the signed start note of a contract's run, answered once recorded;
   * the container starts only after the answer (specs/contract-db.md, "Start notes").
   */
  contractStarted: defineBehaviour<StartNoteRequest, StartAck>('/dms/contract/started', {
    request: C.startNoteRequest,
    reply: C.startAck,
  }),
  /** Requester -> provider: run the contracted job. */
  invoke: defineBehaviour<Invocation, InvocationReply>('/dms/job/invoke', {
    request: C.invocation,
    reply: C.invocationReply,
  }),
  /** Allocation -> the job's inbox: a step of the run, or a heartbeat (`HEARTBEAT`). */
  update: defineBehaviour<JobUpdate>('/dms/job/update', { request: C.jobUpdate }),
  /** Allocation -> the job's inbox: the signed receipt and the outputs' manifest. */
  result: defineBehaviour<JobResult>('/dms/job/result', { request: C.jobResult }),
  /**
   * The contract's requester -> provider: the result once more (a requester restarted after the
   * result reached it but before it stored it); the provider keeps it until settlement.
   */
  resultAgain: defineBehaviour<ResultRequest, JobResult>('/dms/job/result-again', {
    request: C.jobCancel,
    reply: C.jobResult,
  }),
  /** A party -> contract-db: settle on the receipt and the requester's verification. */
  settle: defineBehaviour<SettleRequest, Settlement>('/dms/contract/settle', {
    request: C.settleRequest,
    reply: C.settlement,
  }),
  /** Contract-db -> the other party: the signed settlement. */
  settled: defineBehaviour<Settlement>('/dms/contract/settled', { request: C.settlement }),
  /** A node -> a peer's `blobs` inbox: one chunk of a granted blob. */
  blobGet: defineBehaviour<ChunkRequest, Chunk>('/dms/blob/get', {
    request: C.blobChunkRequest,
    reply: C.blobChunk,
  }),
  /** A grantee -> the blob's node (`blobs` inbox): the blob is no longer needed. */
  blobRelease: defineBehaviour<BlobRelease, BlobReleaseReply>('/dms/blob/release', {
    request: C.blobRelease,
    reply: C.blobReleaseReply,
  }),
  /** Allocation -> the job's inbox: live output. */
  log: defineBehaviour<JobLog>('/dms/job/log', { request: C.jobLog }),
  /** A party -> contract-db: close an active contract without a normal settlement. */
  terminate: defineBehaviour<TerminateRequest, Settlement>('/dms/contract/terminate', {
    request: C.terminateRequest,
    reply: C.settlement,
  }),
  /** Requester -> provider: stop the allocation of this contract. */
  cancel: defineBehaviour<JobCancel, JobCancelReply>('/dms/job/cancel', {
    request: C.jobCancel,
    reply: C.jobCancelReply,
  }),
  /** Requester -> a losing bidder: free what the bid holds now. */
  bidRelease: defineBehaviour<BidRelease>('/dms/job/bid-release', { request: C.bidRelease }),
  /** Gossip on CAPACITY_TOPIC, provider -> requesters: what it has free after something was freed. */
  capacityNews: defineBehaviour<CapacityNews>('/dms/capacity/news', { request: C.capacityNews }),
  /** A node -> contract-db: its approval credential. */
  approval: defineBehaviour<ApprovalRequest, ApprovalCredential>('/dms/approval/get', {
    request: C.approvalRequest,
    reply: C.approvalReply,
  }),
  /** A requester -> contract-db: its own balance and escrow (a workflow's plan is checked against it). */
  balance: defineBehaviour<BalanceRequest, BalanceReply>('/dms/account/balance', {
    request: C.balanceRequest,
    reply: C.balanceReply,
  }),
  /** A requester -> contract-db: a short-lived signed proof of its funds, carried in its bid requests. */
  funds: defineBehaviour<FundsRequest, FundsProof>('/dms/account/funds', {
    request: C.fundsRequest,
    reply: C.fundsReply,
  }),
} as const

/** Calls `onRefused` with the behaviour (`<name>#reply` for replies) and why, then rethrows. */
function counted<T>(
  c: PayloadCodec<T>,
  name: string,
  onRefused: (b: string, r: PayloadRefusal) => void,
): PayloadCodec<T> {
  return {
    encode: (v: T) => c.encode(v),
    decode: (b: Uint8Array) => {
      try {
        return c.decode(b)
      } catch (err) {
        onRefused(name, refusalOf(err))
        throw err
      }
    },
  }
}

/**
 * The registry a DMS node's ActorSystem decodes with: every behaviour in W. `onRefused` hears of
 * each payload refused at decode (its behaviour and why), for the node's counters.
 */
export function dmsCodecs(onRefused?: (behaviour: string, reason: PayloadRefusal) => void): CodecRegistry {
  const registry = new CodecRegistry()
  for (const def of Object.values(W) as Array<{ name: string; codecs: BehaviourCodecs<unknown, unknown> }>) {
    if (onRefused === undefined) registry.register(def.name, def.codecs)
    else
      registry.register(def.name, {
        request: counted(def.codecs.request, def.name, onRefused),
        ...(def.codecs.reply !== undefined
          ? { reply: counted(def.codecs.reply, `${def.name}#reply`, onRefused) }
          : {}),
      })
  }
  return registry
}

/** Whether `msg` is of behaviour `b` (then its payload is `b`'s request, decoded by its codec). */
export function isMessageOf<Req>(msg: Message, b: BehaviourDef<Req, unknown>): msg is Message<Req> {
  return msg.behaviour === b.name
}
