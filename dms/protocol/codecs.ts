/**
 * The protobuf mapping of every DMS payload (proto/dms.proto): each payload type's codec, its
 * wire types checked strictly and its decoded message checked against its bounded shape
 * (shapes.ts) before it is mapped. behaviours.ts pairs them with behaviour names. Adding a
 * payload = a message in proto/dms.proto (`npm run proto`), its type in messages.ts, its shape in
 * shapes.ts and a codec here. Spec: specs/protocol.md ("Behaviours", "Bounds").
 */
import * as P from '../../proto/dms.js'
import * as PW from '../../proto/dms.wire.js'
import type { Chunk, ChunkRequest } from './blob-payloads.js'
import {
  TERMINATION,
  type ApprovalCredential,
  type ContractProof,
  type FundsProof,
  type Settlement,
  type SignedContract,
  type SignedReceipt,
  type StartAck,
  type TerminationReason,
} from '../contracts/model.js'
import {
  asApproval,
  asBlobGrant,
  asBid,
  asContractProof,
  asFunds,
  asSettlement,
  asSignedContract,
  asSignedReceipt,
  asSignedStartNote,
  asSignedVerification,
} from './document-shapes.js'
import {
  approvalFrom,
  approvalTo,
  docFromBytes,
  docToBytes,
  need,
  podOf,
  proto,
  resources,
} from './codec-kit.js'
import type {
  ApprovalRequest,
  BalanceReply,
  BalanceRequest,
  BidMessage,
  BidRelease,
  CapacityNews,
  BidRequest,
  FundsRequest,
  ContractSignReply,
  ContractSignRequest,
  Decline,
  Invocation,
  InvocationReply,
  BlobRelease,
  BlobReleaseReply,
  JobCancel,
  JobCancelReply,
  JobLog,
  JobRequest,
  JobRequestReply,
  JobResult,
  MemberOutcome,
  JobUpdate,
  SettleRequest,
  StartNoteRequest,
  TerminateRequest,
} from './messages.js'
import { DocumentShapeError } from './bounds.js'
import { workloadProblem } from '../workload/check.js'
import { needsProblem, type WorkloadNeeds } from '../workload/needs.js'
import type { Workload } from '../workload/workload.js'

const bidRequest = proto<BidRequest, P.BidRequest>(
  P.BidRequest,
  'BidRequest',
  PW.BidRequestWire,
  ({ approval, funds, workloadNeeds, ...v }) => ({
    ...v,
    ...approvalTo(approval),
    ...(funds === undefined ? {} : { funds: docToBytes(funds) }),
    workloadNeeds: docToBytes(workloadNeeds),
  }),
  ({ approval, funds, quote, workloadNeeds, ...w }) => ({
    ...w,
    workloadNeeds: needsFromBytes(workloadNeeds),
    ...approvalFrom(approval),
    ...(funds === undefined ? {} : { funds: docFromBytes(funds, asFunds) }),
    ...(quote === true ? { quote: true } : {}),
  }),
)

/**
 * The bid request's needs: required (a requester of protocol 3 or before sends image, resources
 * and members instead, fields this provider no longer reads; its envelope is refused first) and
 * checked by the workload module's check before any work is done for the request.
 */
function needsFromBytes(bytes: Uint8Array): WorkloadNeeds {
  if (bytes.length === 0)
    throw new DocumentShapeError(
      'bad_shape',
      'BidRequest.workloadNeeds',
      'BidRequest.workloadNeeds is missing: the requester speaks an older protocol; upgrade it',
    )
  return docFromBytes(bytes, (v) => {
    const problem = needsProblem(v)
    if (problem !== undefined)
      throw new DocumentShapeError(
        'bad_shape',
        `BidRequest.workloadNeeds.${problem.field}`,
        `BidRequest.workloadNeeds.${problem.field} ${problem.problem}`,
      )
    return v as WorkloadNeeds
  })
}
const bid = proto<BidMessage, P.Bid>(
  P.Bid,
  'Bid',
  PW.BidWire,
  (v) => ({ bid: docToBytes(v.bid), ...approvalTo(v.approval) }),
  (w) => ({ bid: docFromBytes(w.bid, asBid), ...approvalFrom(w.approval) }),
)
const decline = proto<Decline, P.Decline>(
  P.Decline,
  'Decline',
  PW.DeclineWire,
  ({ approval, ...v }) => ({ ...v, ...approvalTo(approval) }),
  ({ approval, ...w }) => ({ ...w, ...approvalFrom(approval) }),
)
const approvalRequest = proto<ApprovalRequest, P.ApprovalRequest>(
  P.ApprovalRequest,
  'ApprovalRequest',
  PW.ApprovalRequestWire,
  () => ({}),
  () => ({}),
)
const balanceRequest = proto<BalanceRequest, P.BalanceRequest>(
  P.BalanceRequest,
  'BalanceRequest',
  PW.BalanceRequestWire,
  () => ({}),
  () => ({}),
)
const balanceReply = proto<BalanceReply, P.BalanceMessage>(
  P.BalanceMessage,
  'BalanceMessage',
  PW.BalanceMessageWire,
  (v) => v,
  (w) => ({ balance: w.balance, escrow: w.escrow }),
)
const fundsRequest = proto<FundsRequest, P.FundsRequest>(
  P.FundsRequest,
  'FundsRequest',
  PW.FundsRequestWire,
  () => ({}),
  () => ({}),
)
const fundsReply = proto<FundsProof, P.FundsMessage>(
  P.FundsMessage,
  'FundsMessage',
  PW.FundsMessageWire,
  (v) => ({ proof: docToBytes(v) }),
  (w) => docFromBytes(w.proof, asFunds),
)
const approvalReply = proto<ApprovalCredential, P.ApprovalMessage>(
  P.ApprovalMessage,
  'ApprovalMessage',
  PW.ApprovalMessageWire,
  (v) => ({ credential: docToBytes(v) }),
  (w) => docFromBytes(w.credential, asApproval),
)
const jobRequest = proto<JobRequest, P.JobRequest>(
  P.JobRequest,
  'JobRequest',
  PW.JobRequestWire,
  (v) => v,
  (w) => w,
)
const jobRequestReply = proto<JobRequestReply, P.JobRequestReply>(
  P.JobRequestReply,
  'JobRequestReply',
  PW.JobRequestReplyWire,
  (v) => v,
  (w) => ({ locked: true, lockedUntil: w.lockedUntil }),
)
const contractRequest = proto<ContractSignRequest, P.ContractRequest>(
  P.ContractRequest,
  'ContractRequest',
  PW.ContractRequestWire,
  (v) => ({ contract: docToBytes(v.contract) }),
  (w) => ({ contract: docFromBytes<SignedContract>(w.contract, asSignedContract) }),
)
const contractSignReply = proto<ContractSignReply, P.ContractSignReply>(
  P.ContractSignReply,
  'ContractSignReply',
  PW.ContractSignReplyWire,
  (v) => v,
  (w) => w,
)
const contractProof = proto<ContractProof, P.ContractProofMessage>(
  P.ContractProofMessage,
  'ContractProofMessage',
  PW.ContractProofMessageWire,
  (v) => ({ proof: docToBytes(v) }),
  (w) => docFromBytes(w.proof, asContractProof),
)
const startNoteRequest = proto<StartNoteRequest, P.StartNoteRequest>(
  P.StartNoteRequest,
  'StartNoteRequest',
  PW.StartNoteRequestWire,
  (v) => ({ note: docToBytes(v.note) }),
  (w) => ({ note: docFromBytes(w.note, asSignedStartNote) }),
)
const startAck = proto<StartAck, P.StartAck>(
  P.StartAck,
  'StartAck',
  PW.StartAckWire,
  (v) => v,
  (w) => ({ contractId: w.contractId, startedAt: w.startedAt }),
)
const invocation = proto<Invocation, P.Invocation>(
  P.Invocation,
  'Invocation',
  PW.InvocationWire,
  (v) => ({
    contract: docToBytes(v.contract),
    proof: docToBytes(v.proof),
    inputs: v.inputs.map(({ source, ...f }) =>
      source === undefined ? f : { ...f, source: { ...source, grant: docToBytes(source.grant) } },
    ),
    workload: docToBytes(v.workload),
  }),
  (w) => ({
    contract: docFromBytes(w.contract, asSignedContract),
    proof: docFromBytes(w.proof, asContractProof),
    inputs: w.inputs.map(({ source, ...f }) =>
      source === undefined
        ? f
        : { ...f, source: { ...source, grant: docFromBytes(source.grant, asBlobGrant) } },
    ),
    workload: workloadFromBytes(w.workload),
  }),
)

/**
 * The invocation's workload: required (a requester of protocol 1 sends command, env and members
 * instead, which this provider no longer reads) and checked by the one workload check.
 */
function workloadFromBytes(bytes: Uint8Array): Workload {
  if (bytes.length === 0)
    throw new DocumentShapeError(
      'bad_shape',
      'Invocation.workload',
      'Invocation.workload is missing: the requester speaks an older protocol (before the workload); upgrade it',
    )
  return docFromBytes(bytes, (v) => {
    const problem = workloadProblem(v)
    if (problem !== undefined)
      throw new DocumentShapeError(
        'bad_shape',
        `Invocation.workload.${problem.field}`,
        `Invocation.workload.${problem.field} ${problem.problem}`,
      )
    return v as Workload
  })
}
const invocationReply = proto<InvocationReply, P.InvocationReply>(
  P.InvocationReply,
  'InvocationReply',
  PW.InvocationReplyWire,
  (v) => v,
  (w) => w,
)
const jobUpdate = proto<JobUpdate, P.JobUpdate>(
  P.JobUpdate,
  'JobUpdate',
  PW.JobUpdateWire,
  (v) => v,
  (w) => w,
)
const jobResult = proto<JobResult, P.JobResult>(
  P.JobResult,
  'JobResult',
  PW.JobResultWire,
  (v) => ({ ...v, receipt: docToBytes(v.receipt) }),
  (w) => {
    const { archive, members, ...rest } = w
    return {
      ...rest,
      receipt: docFromBytes<SignedReceipt>(w.receipt, asSignedReceipt),
      ...(archive !== undefined ? { archive } : {}),
      // The status was checked against its four values by the shape (shapes.ts).
      ...podOf(members.map((m) => ({ ...m, status: m.status as MemberOutcome['status'] }))),
    }
  },
)
const blobChunkRequest = proto<ChunkRequest, P.BlobChunkRequest>(
  P.BlobChunkRequest,
  'BlobChunkRequest',
  PW.BlobChunkRequestWire,
  ({ grant, ...v }) => (grant === undefined ? v : { ...v, grant: docToBytes(grant) }),
  ({ grant, ...w }) => (grant === undefined ? w : { ...w, grant: docFromBytes(grant, asBlobGrant) }),
)
const blobChunk = proto<Chunk, P.BlobChunk>(
  P.BlobChunk,
  'BlobChunk',
  PW.BlobChunkWire,
  (v) => ({ size: v.size, data: v.data as Uint8Array<ArrayBuffer> }),
  (w) => w,
)
const blobRelease = proto<BlobRelease, P.BlobRelease>(
  P.BlobRelease,
  'BlobRelease',
  PW.BlobReleaseWire,
  (v) => v,
  (w) => w,
)
const blobReleaseReply = proto<BlobReleaseReply, P.BlobReleaseReply>(
  P.BlobReleaseReply,
  'BlobReleaseReply',
  PW.BlobReleaseReplyWire,
  (v) => v,
  (w) => w,
)
const jobLog = proto<JobLog, P.JobLog>(
  P.JobLog,
  'JobLog',
  PW.JobLogWire,
  (v) => v,
  (w) => {
    if (w.stream !== 'stdout' && w.stream !== 'stderr') throw new Error('stream must be stdout or stderr')
    const { member, ...rest } = w
    return { ...rest, stream: w.stream, ...(member !== undefined ? { member } : {}) }
  },
)
const settleRequest = proto<SettleRequest, P.SettleRequest>(
  P.SettleRequest,
  'SettleRequest',
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
  'TerminateRequest',
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
  'SettlementMessage',
  PW.SettlementMessageWire,
  (v) => ({ settlement: docToBytes(v) }),
  (w) => docFromBytes(w.settlement, asSettlement),
)
const bidRelease = proto<BidRelease, P.BidRelease>(
  P.BidRelease,
  'BidRelease',
  PW.BidReleaseWire,
  (v) => v,
  (w) => w,
)
const capacityNews = proto<CapacityNews, P.CapacityNews>(
  P.CapacityNews,
  'CapacityNews',
  PW.CapacityNewsWire,
  ({ approval, ...v }) => ({ ...v, ...approvalTo(approval) }),
  ({ approval, ...w }) => ({ ...w, free: resources(need(w.free, 'free')), ...approvalFrom(approval) }),
)
const jobCancel = proto<JobCancel, P.JobCancel>(
  P.JobCancel,
  'JobCancel',
  PW.JobCancelWire,
  (v) => v,
  (w) => w,
)
const jobCancelReply = proto<JobCancelReply, P.JobCancelReply>(
  P.JobCancelReply,
  'JobCancelReply',
  PW.JobCancelReplyWire,
  (v) => v,
  (w) => w,
)

/** The codec of each payload (behaviours.ts pairs them with behaviour names). */
export const PAYLOAD_CODECS = {
  bidRequest,
  startNoteRequest,
  startAck,
  bid,
  decline,
  approvalRequest,
  approvalReply,
  balanceRequest,
  balanceReply,
  fundsRequest,
  fundsReply,
  jobRequest,
  jobRequestReply,
  contractRequest,
  contractSignReply,
  contractProof,
  invocation,
  invocationReply,
  jobUpdate,
  jobResult,
  blobChunkRequest,
  blobChunk,
  blobRelease,
  blobReleaseReply,
  jobLog,
  settleRequest,
  terminateRequest,
  settlement,
  bidRelease,
  capacityNews,
  jobCancel,
  jobCancelReply,
} as const

export { refusalOf, type PayloadRefusal } from './codec-kit.js'
