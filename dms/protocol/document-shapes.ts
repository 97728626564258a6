/**
 * Bounded shapes of the signed documents when they arrive as canonical JSON inside a protobuf
 * payload (dms/protocol/codecs.ts). They refuse what the code would trip over (a missing field, a string
 * where a number belongs), any field the model does not have, and any string or list over its
 * bound (dms/protocol/bounds.ts), before the document is stored or its signature checked. Keep in step
 * with model.ts.
 */
import { guard, LIMITS as L, S, type Shape } from './bounds.js'
import {
  MAX_SKIPPED_DETAIL,
  ROLES,
  type ApprovalCredential,
  type BlobGrant,
  type FundsProof,
  type ContractProof,
  type Settlement,
  type SignedContract,
  type SignedReceipt,
  type SignedStartNote,
  type SignedVerification,
  type Bid,
} from '../contracts/model.js'

export { DocumentShapeError } from './bounds.js'

const id = S.str(L.id)
const peer = S.str(L.peer)
const sig = S.str(L.signature)
const hash = S.str(L.hash)
const party = S.obj({ peer, publicKey: S.str(L.key) })
export const RESOURCES: Shape = S.obj({ cpu: S.num, memoryBytes: S.num, diskBytes: S.num, gpus: S.num })

// Every field any price model has; which belong to which model is dms/pricing's check (priceProblem).
const PRICE = S.obj({
  model: S.str(L.name),
  unit: S.opt(S.str(L.name)),
  currency: S.str(L.name),
  rate: S.opt(S.num),
  minimum: S.opt(S.num),
  amount: S.opt(S.num),
})

const BID = S.obj({
  bidId: id,
  jobId: id,
  provider: peer,
  resources: RESOURCES,
  image: S.str(L.image),
  engine: S.opt(S.str(L.engine)),
  maxDurationSeconds: S.num,
  price: S.opt(PRICE),
  pricePerHour: S.opt(S.num),
  minJobPrice: S.opt(S.num),
  total: S.num,
  earliestStart: S.num,
  expectedFinish: S.num,
  expiresAt: S.num,
  resourcesReserved: S.bool,
  signature: sig,
})

const SIGNED_CONTRACT = S.obj({
  terms: S.obj({
    contractId: id,
    jobId: id,
    bidId: id,
    requester: party,
    provider: party,
    contractDb: peer,
    // Copies of the bid's: carried by terms of earlier versions only (model.ts).
    resources: S.opt(RESOURCES),
    image: S.opt(S.str(L.image)),
    workloadHash: S.opt(hash),
    maxDurationSeconds: S.opt(S.num),
    pricePerHour: S.opt(S.num),
    escrow: S.num,
    bid: BID,
    createdAt: S.num,
    expiresAt: S.num,
    startBy: S.opt(S.num),
  }),
  requesterSignature: sig,
  providerSignature: S.opt(sig),
})

const CONTRACT_PROOF = S.obj({
  contractId: id,
  termsHash: hash,
  escrowLocked: S.num,
  issuedAt: S.num,
  settleBy: S.opt(S.num),
  contractDb: peer,
  signature: sig,
})

const SIGNED_RECEIPT = S.obj({
  receipt: S.obj({
    contractId: id,
    jobId: id,
    allocationId: id,
    status: S.oneOf('completed', 'failed', 'timed_out', 'cancelled'),
    exitCode: S.num,
    reason: S.opt(S.str(L.text)),
    outputsHash: hash,
    // Present when entries of /outputs were left out.
    outputsSkipped: S.opt(S.obj({ count: S.num, detail: S.str(MAX_SKIPPED_DETAIL) })),
    usage: S.obj({
      wallSeconds: S.num,
      cpuSeconds: S.num,
      peakMemoryBytes: S.num,
      gpuSeconds: S.opt(S.num),
      gpuPeakMemoryBytes: S.opt(S.num),
    }),
    finishedAt: S.num,
  }),
  signature: sig,
})

const SIGNED_VERIFICATION = S.obj({
  verification: S.obj({
    contractId: id,
    receiptHash: hash,
    verified: S.bool,
    outputsHashOk: S.bool,
    receiptSignatureOk: S.bool,
    verifiedAt: S.num,
  }),
  signature: sig,
})

const SETTLEMENT = S.obj({
  contractId: id,
  outcome: S.oneOf('settled', 'terminated'),
  reason: S.opt(S.str(L.name)),
  paidToProvider: S.num,
  refundedToRequester: S.num,
  billedSeconds: S.num,
  settledAt: S.num,
  contractDb: peer,
  signature: sig,
})

const SIGNED_START_NOTE = S.obj({
  note: S.obj({ contractId: id, provider: peer, at: S.num }),
  signature: sig,
})

const APPROVAL = S.obj({
  peer,
  contractDb: peer,
  issuedAt: S.num,
  expiresAt: S.num,
  roles: S.opt(S.arr(S.oneOf(...ROLES), ROLES.length)),
  signature: sig,
})

const FUNDS = S.obj({
  peer,
  contractDb: peer,
  available: S.num,
  issuedAt: S.num,
  expiresAt: S.num,
  signature: sig,
})

const BLOB_GRANT = S.obj({ sha256: hash, owner: peer, grantee: peer, expiresAt: S.num, signature: sig })
export const asBlobGrant = guard<BlobGrant>(BLOB_GRANT, 'blob grant')

export const asSignedContract = guard<SignedContract>(SIGNED_CONTRACT, 'contract')
export const asContractProof = guard<ContractProof>(CONTRACT_PROOF, 'proof')
export const asSignedReceipt = guard<SignedReceipt>(SIGNED_RECEIPT, 'receipt')
export const asSettlement = guard<Settlement>(SETTLEMENT, 'settlement')
export const asBid = guard<Bid>(BID, 'bid')
export const asSignedVerification = guard<SignedVerification>(SIGNED_VERIFICATION, 'verification')
export const asSignedStartNote = guard<SignedStartNote>(SIGNED_START_NOTE, 'start note')
export const asApproval = guard<ApprovalCredential>(APPROVAL, 'approval')
export const asFunds = guard<FundsProof>(FUNDS, 'funds proof')
