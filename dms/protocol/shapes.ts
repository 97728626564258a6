/**
 * The bounded shape of every DMS payload as protobuf decodes it (proto/dms.proto), checked by
 * the codecs in codecs.ts before anything else: every string and list has a maximum length
 * (bounds.ts), and a signed document travelling as bytes is bounded in bytes before it is
 * parsed (its own fields are then checked by dms/protocol/document-shapes.ts). Spec: specs/protocol.md
 * ("Bounds").
 */
import { LIMITS as L, S, type Shape } from './bounds.js'
import { RESOURCES } from './document-shapes.js'

/** Largest canonical JSON of a signed document inside a payload (bytes). */
export const DOC_BYTES = {
  /** A contract embeds the bid: the largest document. */
  contract: 64 * 1024,
  /** A bid, proof, receipt, verification, settlement or approval credential. */
  doc: 16 * 1024,
  /**
   * A workload (dms/workload/workload.ts) in an invocation: up to 8 members, each with up to 256
   * arguments and 256 env entries of up to 64 KiB (a job spec's bounds), in 16 MiB at most. Its
   * fields are then checked by `workloadProblem`.
   */
  workload: 16 * 1024 * 1024,
  /**
   * A workload's needs (dms/workload/needs.ts) in a bid request: at most 8 members of a name, an
   * artifact, a network policy and resources, a few hundred bytes each; gossiped to every
   * provider, so kept small. Its fields are then checked by `needsProblem`.
   */
  needs: 64 * 1024,
} as const

const id = S.str(L.id)
const peer = S.str(L.peer)
const hash = S.str(L.hash)
const doc = S.bytes(DOC_BYTES.doc)
const contract = S.bytes(DOC_BYTES.contract)
const file = S.obj({ path: S.str(L.path), sha256: hash, size: S.num })
/** An input file, possibly from another provider's archive under a delegated grant. */
const inputFile = S.obj({
  path: S.str(L.path),
  sha256: hash,
  size: S.num,
  source: S.opt(
    S.obj({
      peer,
      addrs: S.arr(S.str(L.addr), L.addrs),
      archive: hash,
      archiveSize: S.num,
      entry: S.str(L.path),
      grant: doc,
    }),
  ),
})

/** A pod's member count is bounded at decode (2..8 are checked by the provider). */
const members = (item: Shape) => S.arr(item, L.podMembers)

/** Each protobuf message of proto/dms.proto, by name. */
export const WIRE_SHAPES = {
  BidRequest: S.obj({
    jobId: id,
    maxDurationSeconds: S.num,
    maxPrice: S.num,
    deadline: S.num,
    exclude: S.arr(peer, L.exclude),
    approval: S.opt(doc),
    funds: S.opt(doc),
    quote: S.opt(S.bool),
    workloadNeeds: S.bytes(DOC_BYTES.needs),
  }),
  Bid: S.obj({ bid: doc, approval: S.opt(doc) }),
  Decline: S.obj({
    jobId: id,
    provider: peer,
    reasons: S.arr(S.str(L.text), L.reasons),
    approval: S.opt(doc),
  }),
  ApprovalRequest: S.obj({}),
  ApprovalMessage: S.obj({ credential: doc }),
  BalanceRequest: S.obj({}),
  BalanceMessage: S.obj({ balance: S.num, escrow: S.num }),
  FundsRequest: S.obj({}),
  FundsMessage: S.obj({ proof: doc }),
  JobRequest: S.obj({ jobId: id, bidId: id }),
  JobRequestReply: S.obj({ locked: S.bool, lockedUntil: S.num }),
  ContractRequest: S.obj({ contract }),
  ContractSignReply: S.obj({ providerSignature: S.str(L.signature) }),
  ContractProofMessage: S.obj({ proof: doc }),
  StartNoteRequest: S.obj({ note: doc }),
  StartAck: S.obj({ contractId: id, startedAt: S.num }),
  Invocation: S.obj({
    contract,
    proof: doc,
    inputs: S.arr(inputFile, L.inputs),
    workload: S.bytes(DOC_BYTES.workload),
  }),
  InvocationReply: S.obj({ allocationId: id }),
  JobUpdate: S.obj({
    jobId: id,
    allocationId: id,
    state: S.str(L.name),
    at: S.num,
    detail: S.opt(S.str(L.text)),
    usage: S.opt(S.obj({ cpuSeconds: S.num, memoryBytes: S.num, logBytes: S.num, wallSeconds: S.num })),
  }),
  LiveUsage: S.obj({ cpuSeconds: S.num, memoryBytes: S.num, logBytes: S.num, wallSeconds: S.num }),
  JobResult: S.obj({
    jobId: id,
    receipt: doc,
    stdout: S.str(L.log),
    stderr: S.str(L.log),
    truncated: S.bool,
    outputs: S.arr(file, L.outputs),
    archive: S.opt(S.obj({ sha256: hash, size: S.num })),
    members: members(
      S.obj({
        name: S.str(L.name),
        status: S.oneOf('completed', 'failed', 'timed_out', 'cancelled'),
        exitCode: S.num,
        reason: S.opt(S.str(L.text)),
        stdout: S.str(L.log),
        stderr: S.str(L.log),
        truncated: S.bool,
      }),
    ),
  }),
  BlobChunkRequest: S.obj({ sha256: hash, offset: S.num, length: S.num, grant: S.opt(doc) }),
  BlobChunk: S.obj({ size: S.num, data: S.bytes(L.chunk) }),
  BlobRelease: S.obj({ sha256: hash, jobId: id }),
  BlobReleaseReply: S.obj({ removed: S.bool }),
  JobLog: S.obj({
    jobId: id,
    allocationId: id,
    stream: S.str(L.name),
    seq: S.num,
    data: S.str(L.log),
    member: S.opt(S.str(L.name)),
  }),
  SettleRequest: S.obj({ contractId: id, receipt: doc, verification: doc }),
  SettlementMessage: S.obj({ settlement: doc }),
  TerminateRequest: S.obj({
    contractId: id,
    reason: S.str(L.name),
    detail: S.opt(S.str(L.text)),
    receipt: S.opt(doc),
  }),
  JobCancel: S.obj({ jobId: id, contractId: id }),
  JobCancelReply: S.obj({ stopping: S.bool }),
  BidRelease: S.obj({ jobId: id, bidId: id }),
  CapacityNews: S.obj({ provider: peer, free: S.opt(RESOURCES), at: S.num, approval: S.opt(doc) }),
} satisfies Record<string, Shape>
