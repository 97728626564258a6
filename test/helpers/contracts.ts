/** Builders for signed contract documents, as a requester and a provider would make them. */
import { randomUUID } from 'node:crypto'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { KeyPair } from '../../actors/identity.js'
import { hashDoc, signDoc } from '../../dms/contracts/canonical.js'
import {
  DOMAIN,
  type ContractTerms,
  type Receipt,
  type SignedContract,
  type SignedReceipt,
  type SignedVerification,
  type Bid,
} from '../../dms/contracts/model.js'
import { contractIdFor } from '../../dms/contracts/contract-id.js'
import { escrowFor } from '../../dms/contracts/money.js'
import { partyOf } from '../../dms/contracts/party.js'
import { escrowFor as escrowOf } from '../../dms/pricing/price.js'
import type { PriceTerms } from '../../dms/pricing/terms.js'
import type { SettleRequest } from '../../dms/protocol/messages.js'
import { workloadHash } from '../../dms/workload/hash.js'
import { SINGLE_MEMBER, type Workload } from '../../dms/workload/workload.js'

export interface Who {
  key: KeyPair
  peer: string
}

export const peerOf = (key: KeyPair): string =>
  peerIdFromPrivateKey(privateKeyFromRaw(key.libp2pRaw())).toString()

export function newParty(): Who {
  const key = KeyPair.generate()
  return { key, peer: peerOf(key) }
}

export interface ContractOpts {
  pricePerHour?: number
  maxDurationSeconds?: number
  minJobPrice?: number
  /** ms since the epoch. @default Date.now() */
  now?: number
  /** @default now + 60 000 */
  expiresAt?: number
  jobId?: string
  /** The terms' start deadline (ms since the epoch). @default none */
  startBy?: number
  /**
   * The bid's price terms, signed as today's bids carry them (the terms copy none). @default a
   * dms 0.1 bid: `pricePerHour` and `minJobPrice`, copied into the terms
   */
  price?: PriceTerms
  /**
   * What the terms sign of what runs: a hash, or `false` for terms of an earlier version that sign
   * none. @default the hash of `contractWorkload()`
   */
  workloadHash?: string | false
  /**
   * Terms of an earlier version: with copies of the bid's resources, image and max duration.
   * @default false: terms of this version, which copy none of the bid's fields
   */
  copies?: boolean
}

/** The one-member workload a `makeContract` contract signs by default: its image and resources. */
export function contractWorkload(command: string[] = ['true']): Workload {
  return {
    members: [
      {
        name: SINGLE_MEMBER,
        artifact: { kind: 'image', ref: 'dms-test:1' },
        command,
        env: {},
        network: 'none',
        resources: { cpu: 1, memoryBytes: 64 * 1024 * 1024 },
      },
    ],
  }
}

/** A contract signed by both parties, embedding the provider's signed bid. */
export function makeContract(
  requester: Who,
  provider: Who,
  contractDb: string,
  o: ContractOpts = {},
): SignedContract {
  const now = o.now ?? Date.now()
  const pricePerHour = o.pricePerHour ?? 3600
  const maxDurationSeconds = o.maxDurationSeconds ?? 60
  const minJobPrice = o.minJobPrice ?? 0
  const jobId = o.jobId ?? randomUUID()
  const resources = { cpu: 1, memoryBytes: 64 * 1024 * 1024, diskBytes: 0, gpus: 0 }
  const total =
    o.price === undefined
      ? escrowFor(pricePerHour, maxDurationSeconds, minJobPrice)
      : escrowOf(o.price, { durationSeconds: maxDurationSeconds })
  const price = o.price === undefined ? { pricePerHour, minJobPrice } : { price: o.price }
  const body: Omit<Bid, 'signature'> = {
    bidId: randomUUID(),
    jobId,
    provider: provider.peer,
    resources,
    image: 'dms-test:1',
    maxDurationSeconds,
    ...price,
    total,
    earliestStart: now,
    expectedFinish: now + maxDurationSeconds * 1000,
    expiresAt: now + 30_000,
    resourcesReserved: true,
  }
  const bid: Bid = { ...body, signature: signDoc(provider.key, DOMAIN.bid, body) }
  const terms: ContractTerms = {
    contractId: contractIdFor({ requester: requester.peer, jobId, bidId: bid.bidId, createdAt: now }),
    jobId,
    bidId: bid.bidId,
    requester: partyOf(requester.peer, requester.key.publicKey),
    provider: partyOf(provider.peer, provider.key.publicKey),
    contractDb,
    ...(o.copies === true ? { resources, image: bid.image, maxDurationSeconds } : {}),
    ...(o.workloadHash === false ? {} : { workloadHash: o.workloadHash ?? workloadHash(contractWorkload()) }),
    ...(o.price === undefined ? { pricePerHour } : {}),
    escrow: total,
    bid,
    createdAt: now,
    expiresAt: o.expiresAt ?? now + 60_000,
    ...(o.startBy !== undefined ? { startBy: o.startBy } : {}),
  }
  return sign(terms, requester, provider)
}

/** Signs (or re-signs, after a change) terms by both parties. */
export function sign(terms: ContractTerms, requester: Who, provider: Who): SignedContract {
  return {
    terms,
    requesterSignature: signDoc(requester.key, DOMAIN.contract, terms),
    providerSignature: signDoc(provider.key, DOMAIN.contract, terms),
  }
}

export function makeReceipt(
  c: SignedContract,
  provider: Who,
  o: { wallSeconds?: number; status?: Receipt['status']; exitCode?: number } = {},
): SignedReceipt {
  const receipt: Receipt = {
    contractId: c.terms.contractId,
    jobId: c.terms.jobId,
    allocationId: randomUUID(),
    status: o.status ?? 'completed',
    exitCode: o.exitCode ?? 0,
    outputsHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    usage: { wallSeconds: o.wallSeconds ?? 10, cpuSeconds: 1, peakMemoryBytes: 1024 },
    finishedAt: Date.now(),
  }
  return { receipt, signature: signDoc(provider.key, DOMAIN.receipt, receipt) }
}

export function makeVerification(
  c: SignedContract,
  receipt: SignedReceipt,
  requester: Who,
  verified = true,
): SignedVerification {
  const verification = {
    contractId: c.terms.contractId,
    receiptHash: hashDoc(receipt.receipt),
    verified,
    outputsHashOk: verified,
    receiptSignatureOk: true,
    verifiedAt: Date.now(),
  }
  return { verification, signature: signDoc(requester.key, DOMAIN.verification, verification) }
}

/** A complete settle request: the provider's receipt and the requester's verification. */
export function makeSettle(
  c: SignedContract,
  requester: Who,
  provider: Who,
  o: { wallSeconds?: number; status?: Receipt['status']; exitCode?: number; verified?: boolean } = {},
): SettleRequest {
  const receipt = makeReceipt(c, provider, o)
  return {
    contractId: c.terms.contractId,
    receipt,
    verification: makeVerification(c, receipt, requester, o.verified ?? true),
  }
}
