/**
 * The DMS protocol's payload codecs: behaviour name -> protobuf messages of proto/dms.proto.
 * Adding a behaviour = a message in proto/dms.proto (`npm run proto`), its payload type in
 * messages.ts, and one entry in `W` below. Spec: specs/protocol.md ("Behaviours").
 */
import { CodecRegistry, defineBehaviour, type PayloadCodec } from '../actors/codec.js'
import { checkWire, type WireSchema } from '../actors/wire.js'
import * as P from '../proto/dms.js'
import * as PW from '../proto/dms.wire.js'
import type { Chunk, ChunkRequest } from './blobs/service.js'
import { canonicalJson } from './contracts/canonical.js'
import {
  TERMINATION,
  type ContractProof,
  type Settlement,
  type SignedContract,
  type SignedReceipt,
  type TerminationReason,
} from './contracts/model.js'
import {
  asBid,
  asContractProof,
  asSettlement,
  asSignedContract,
  asSignedReceipt,
  asSignedVerification,
} from './contracts/shapes.js'
import {
  B,
  type Bid,
  type BidRelease,
  type BidRequest,
  type ContractSignReply,
  type ContractSignRequest,
  type ContractVerifyRequest,
  type Decline,
  type Invocation,
  type InvocationReply,
  type JobCancel,
  type JobCancelReply,
  type JobRequest,
  type JobRequestReply,
  type JobLog,
  type JobResult,
  type JobUpdate,
  type SettleRequest,
  type TerminateRequest,
} from './messages.js'
import type { Resources } from './resources/types.js'

interface ProtoMessage<W> {
  encode(obj: Partial<W>): Uint8Array
  decode(buf: Uint8Array): W
}

/**
 * A codec from a generated protobuf message (its wire-type schema checked strictly before protons
 * decodes) and the mapping between it and the payload type.
 */
function proto<T, W>(
  msg: ProtoMessage<W>,
  schema: WireSchema,
  toWire: (v: T) => Partial<W>,
  fromWire: (w: W) => T,
): PayloadCodec<T> {
  return {
    encode: (v) => msg.encode(toWire(v)),
    decode: (b) => {
      checkWire(b, schema)
      return fromWire(msg.decode(b))
    },
  }
}

const enc = new TextEncoder()
const dec = new TextDecoder('utf-8', { fatal: true })
/** A signed document on the wire: its canonical JSON, the bytes its signature covers. */
const docToBytes = (doc: unknown): Uint8Array<ArrayBuffer> => enc.encode(canonicalJson(doc))
const docFromBytes = <T>(bytes: Uint8Array, as: (v: unknown) => T): T => as(JSON.parse(dec.decode(bytes)))

function need<T>(v: T | undefined, what: string): T {
  if (v === undefined) throw new Error(`${what} is missing`)
  return v
}
const resources = (r: P.Resources): Resources => ({
  cpu: r.cpu,
  memoryBytes: r.memoryBytes,
  diskBytes: r.diskBytes,
  gpus: r.gpus,
})

const bidRequest = proto<BidRequest, P.BidRequest>(
  P.BidRequest,
  PW.BidRequestWire,
  (v) => v,
  (w) => ({ ...w, resources: resources(need(w.resources, 'resources')) }),
)
const bid = proto<Bid, P.Bid>(
  P.Bid,
  PW.BidWire,
  (v) => ({ bid: docToBytes(v) }),
  (w) => docFromBytes(w.bid, asBid),
)
const decline = proto<Decline, P.Decline>(
  P.Decline,
  PW.DeclineWire,
  (v) => v,
  (w) => w,
)
const jobRequest = proto<JobRequest, P.JobRequest>(
  P.JobRequest,
  PW.JobRequestWire,
  (v) => v,
  (w) => w,
)
const jobRequestReply = proto<JobRequestReply, P.JobRequestReply>(
  P.JobRequestReply,
  PW.JobRequestReplyWire,
  (v) => v,
  (w) => ({ locked: true, lockedUntil: w.lockedUntil }),
)
const contractRequest = proto<ContractSignRequest, P.ContractRequest>(
  P.ContractRequest,
  PW.ContractRequestWire,
  (v) => ({ contract: docToBytes(v.contract) }),
  (w) => ({ contract: docFromBytes<SignedContract>(w.contract, asSignedContract) }),
)
const contractSignReply = proto<ContractSignReply, P.ContractSignReply>(
  P.ContractSignReply,
  PW.ContractSignReplyWire,
  (v) => v,
  (w) => w,
)
const contractProof = proto<ContractProof, P.ContractProofMessage>(
  P.ContractProofMessage,
  PW.ContractProofMessageWire,
  (v) => ({ proof: docToBytes(v) }),
  (w) => docFromBytes(w.proof, asContractProof),
)
const invocation = proto<Invocation, P.Invocation>(
  P.Invocation,
  PW.InvocationWire,
  (v) => ({
    contract: docToBytes(v.contract),
    proof: docToBytes(v.proof),
    command: v.command,
    env: new Map(Object.entries(v.env ?? {})),
    inputs: v.inputs,
  }),
  (w) => ({
    contract: docFromBytes(w.contract, asSignedContract),
    proof: docFromBytes(w.proof, asContractProof),
    command: w.command,
    env: Object.fromEntries(w.env),
    inputs: w.inputs,
  }),
)
const invocationReply = proto<InvocationReply, P.InvocationReply>(
  P.InvocationReply,
  PW.InvocationReplyWire,
  (v) => v,
  (w) => w,
)
const jobUpdate = proto<JobUpdate, P.JobUpdate>(
  P.JobUpdate,
  PW.JobUpdateWire,
  (v) => v,
  (w) => w,
)
const jobResult = proto<JobResult, P.JobResult>(
  P.JobResult,
  PW.JobResultWire,
  (v) => ({ ...v, receipt: docToBytes(v.receipt) }),
  (w) => {
    const { archive, ...rest } = w
    return {
      ...rest,
      receipt: docFromBytes<SignedReceipt>(w.receipt, asSignedReceipt),
      ...(archive !== undefined ? { archive } : {}),
    }
  },
)
const blobChunkRequest = proto<ChunkRequest, P.BlobChunkRequest>(
  P.BlobChunkRequest,
  PW.BlobChunkRequestWire,
  (v) => v,
  (w) => w,
)
const blobChunk = proto<Chunk, P.BlobChunk>(
  P.BlobChunk,
  PW.BlobChunkWire,
  (v) => ({ size: v.size, data: v.data as Uint8Array<ArrayBuffer> }),
  (w) => w,
)
const jobLog = proto<JobLog, P.JobLog>(
  P.JobLog,
  PW.JobLogWire,
  (v) => v,
  (w) => {
    if (w.stream !== 'stdout' && w.stream !== 'stderr') throw new Error('stream must be stdout or stderr')
    return { ...w, stream: w.stream }
  },
)
const settleRequest = proto<SettleRequest, P.SettleRequest>(
  P.SettleRequest,
  PW.SettleRequestWire,
  (v) => ({
    contractId: v.contractId,
    receipt: docToBytes(v.receipt),
    verification: docToBytes(v.verification),
  }),
  (w) => ({
    contractId: w.contractId,
    receipt: docFromBytes(w.receipt, asSignedReceipt),
    verification: docFromBytes(w.verification, asSignedVerification),
  }),
)
const terminateRequest = proto<TerminateRequest, P.TerminateRequest>(
  P.TerminateRequest,
  PW.TerminateRequestWire,
  (v) => ({
    contractId: v.contractId,
    reason: v.reason,
    ...(v.detail !== undefined ? { detail: v.detail } : {}),
    ...(v.receipt !== undefined ? { receipt: docToBytes(v.receipt) } : {}),
  }),
  (w) => {
    if (!(Object.values(TERMINATION) as string[]).includes(w.reason)) {
      throw new Error(`reason must be one of ${Object.values(TERMINATION).join(', ')}`)
    }
    return {
      contractId: w.contractId,
      reason: w.reason as TerminationReason,
      ...(w.detail !== undefined ? { detail: w.detail } : {}),
      ...(w.receipt !== undefined ? { receipt: docFromBytes(w.receipt, asSignedReceipt) } : {}),
    }
  },
)
const settlement = proto<Settlement, P.SettlementMessage>(
  P.SettlementMessage,
  PW.SettlementMessageWire,
  (v) => ({ settlement: docToBytes(v) }),
  (w) => docFromBytes(w.settlement, asSettlement),
)
const bidRelease = proto<BidRelease, P.BidRelease>(
  P.BidRelease,
  PW.BidReleaseWire,
  (v) => v,
  (w) => w,
)
const jobCancel = proto<JobCancel, P.JobCancel>(
  P.JobCancel,
  PW.JobCancelWire,
  (v) => v,
  (w) => w,
)
const jobCancelReply = proto<JobCancelReply, P.JobCancelReply>(
  P.JobCancelReply,
  PW.JobCancelReplyWire,
  (v) => v,
  (w) => w,
)

/**
 * Every DMS behaviour, typed, with its request (and reply) codec: `actor.send(to, W.bid, bid)`
 * type-checks `bid`; `actor.request(to, W.jobRequest, req)` resolves with a JobRequestReply.
 * Code that still passes the name strings (B.*) gets the same codecs through the registry.
 */
export const W = {
  bidRequest: defineBehaviour<BidRequest>(B.bidRequest, { request: bidRequest }),
  bid: defineBehaviour<Bid>(B.bid, { request: bid }),
  decline: defineBehaviour<Decline>(B.decline, { request: decline }),
  jobRequest: defineBehaviour<JobRequest, JobRequestReply>(B.jobRequest, {
    request: jobRequest,
    reply: jobRequestReply,
  }),
  contractSign: defineBehaviour<ContractSignRequest, ContractSignReply>(B.contractSign, {
    request: contractRequest,
    reply: contractSignReply,
  }),
  contractVerify: defineBehaviour<ContractVerifyRequest, ContractProof>(B.contractVerify, {
    request: contractRequest,
    reply: contractProof,
  }),
  invoke: defineBehaviour<Invocation, InvocationReply>(B.invoke, {
    request: invocation,
    reply: invocationReply,
  }),
  update: defineBehaviour<JobUpdate>(B.update, { request: jobUpdate }),
  result: defineBehaviour<JobResult>(B.result, { request: jobResult }),
  settle: defineBehaviour<SettleRequest, Settlement>(B.settle, { request: settleRequest, reply: settlement }),
  settled: defineBehaviour<Settlement>(B.settled, { request: settlement }),
  blobGet: defineBehaviour<ChunkRequest, Chunk>(B.blobGet, { request: blobChunkRequest, reply: blobChunk }),
  log: defineBehaviour<JobLog>(B.log, { request: jobLog }),
  terminate: defineBehaviour<TerminateRequest, Settlement>(B.terminate, {
    request: terminateRequest,
    reply: settlement,
  }),
  cancel: defineBehaviour<JobCancel, JobCancelReply>(B.cancel, { request: jobCancel, reply: jobCancelReply }),
  bidRelease: defineBehaviour<BidRelease>(B.bidRelease, { request: bidRelease }),
} as const

/** The registry a DMS node's ActorSystem decodes with: every behaviour in W. */
export function dmsCodecs(): CodecRegistry {
  const registry = new CodecRegistry()
  for (const def of Object.values(W)) registry.add(def)
  return registry
}
