/**
 * Shape checks for the signed documents when they arrive as canonical JSON inside a protobuf
 * payload (dms/wire.ts). They refuse what the code would trip over (a missing field, a string
 * where a number belongs); signatures are checked later by the behaviours. Keep in step with
 * model.ts.
 */
import type { Bid } from '../messages.js'
import type { ContractProof, Settlement, SignedContract, SignedReceipt, SignedVerification } from './model.js'

type Shape = 'string' | 'number' | 'boolean' | '?string' | '?number' | { [field: string]: Shape }

export class DocumentShapeError extends Error {
  override name = 'DocumentShapeError'
}

function check(value: unknown, shape: Shape, path: string): void {
  if (typeof shape === 'string') {
    if (shape.startsWith('?') && value === undefined) return
    const want = shape.replace('?', '')
    if (typeof value !== want || (want === 'number' && !Number.isFinite(value)))
      throw new DocumentShapeError(`${path} must be a ${want}`)
    return
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new DocumentShapeError(`${path} must be an object`)
  for (const [key, s] of Object.entries(shape)) {
    // A field named `name?` is optional: absent, or of its shape.
    const k = key.endsWith('?') ? key.slice(0, -1) : key
    const v = (value as Record<string, unknown>)[k]
    if (v !== undefined || k === key) check(v, s, `${path}.${k}`)
  }
}

const party: Shape = { peer: 'string', publicKey: 'string' }
const resources: Shape = { cpu: 'number', memoryBytes: 'number', diskBytes: 'number', gpus: 'number' }

const BID: Shape = {
  bidId: 'string',
  jobId: 'string',
  provider: 'string',
  resources,
  image: 'string',
  maxDurationSeconds: 'number',
  pricePerHour: 'number',
  minJobPrice: 'number',
  total: 'number',
  earliestStart: 'number',
  expectedFinish: 'number',
  expiresAt: 'number',
  resourcesReserved: 'boolean',
  fit: '?number',
  signature: 'string',
}

const SIGNED_CONTRACT: Shape = {
  terms: {
    contractId: 'string',
    jobId: 'string',
    bidId: 'string',
    requester: party,
    provider: party,
    contractDb: 'string',
    resources,
    image: 'string',
    maxDurationSeconds: 'number',
    pricePerHour: 'number',
    escrow: 'number',
    bid: BID,
    createdAt: 'number',
    expiresAt: 'number',
  },
  requesterSignature: 'string',
  providerSignature: '?string',
}

const CONTRACT_PROOF: Shape = {
  contractId: 'string',
  termsHash: 'string',
  escrowLocked: 'number',
  issuedAt: 'number',
  contractDb: 'string',
  signature: 'string',
}

const SIGNED_RECEIPT: Shape = {
  receipt: {
    contractId: 'string',
    jobId: 'string',
    allocationId: 'string',
    status: 'string',
    exitCode: 'number',
    reason: '?string',
    outputsHash: 'string',
    'outputsSkipped?': { count: 'number', detail: 'string' },
    usage: { wallSeconds: 'number', cpuSeconds: 'number', peakMemoryBytes: 'number' },
    finishedAt: 'number',
  },
  signature: 'string',
}

const SIGNED_VERIFICATION: Shape = {
  verification: {
    contractId: 'string',
    receiptHash: 'string',
    verified: 'boolean',
    outputsHashOk: 'boolean',
    receiptSignatureOk: 'boolean',
    verifiedAt: 'number',
  },
  signature: 'string',
}

const SETTLEMENT: Shape = {
  contractId: 'string',
  outcome: 'string',
  reason: '?string',
  paidToProvider: 'number',
  refundedToRequester: 'number',
  billedSeconds: 'number',
  settledAt: 'number',
  contractDb: 'string',
  signature: 'string',
}

const guard =
  <T>(shape: Shape, name: string) =>
  (value: unknown): T => {
    check(value, shape, name)
    return value as T
  }

export const asSignedContract = guard<SignedContract>(SIGNED_CONTRACT, 'contract')
export const asContractProof = guard<ContractProof>(CONTRACT_PROOF, 'proof')
export const asSignedReceipt = guard<SignedReceipt>(SIGNED_RECEIPT, 'receipt')
export const asSettlement = guard<Settlement>(SETTLEMENT, 'settlement')
export const asBid = guard<Bid>(BID, 'bid')
export const asSignedVerification = guard<SignedVerification>(SIGNED_VERIFICATION, 'verification')
