/**
 * The `contracting` step: draft the terms from the winning bid, have the provider countersign,
 * have the contract-db verify them and lock the escrow, and check its proof. A refusal before the
 * contract-db locked anything sends the job back to its next bid (`ContractRefusal`); an outcome
 * that may have locked escrow fails the job. Spec: specs/protocol.md ("Contract closure",
 * "Contracting fallback").
 */
import { randomUUID } from 'node:crypto'
import type { Clock } from '../../actors/clock.js'
import { codeOf } from '../../actors/errors.js'
import type { Handle } from '../../actors/envelope.js'
import { keyToString, type KeyPair } from '../../actors/identity.js'
import type { Actor } from '../../actors/system.js'
import { signDoc, verifyDoc } from '../contracts/canonical.js'
import { BadProofError, type ContractDbClient } from '../contracts/client.js'
import { termsBidProblem } from '../contracts/consistency.js'
import {
  DOMAIN,
  type ContractProof,
  type ContractTerms,
  type SignedContract,
  type Bid,
} from '../contracts/model.js'
import { partyOf } from '../contracts/party.js'
import { W } from '../protocol/behaviours.js'
import { publicKeyOf } from '../protocol/handles.js'
import type { ContractSignReply } from '../protocol/messages.js'
import { ContractRefusal, JobFailure, type Step } from './job-machine.js'
import type { JobRecord } from './job-record.js'

export interface CloseContractDeps {
  actor: Actor
  key: KeyPair
  clock: Clock
  /** This requester's peer id. */
  peerId: string
  /** Verifies the contract and checks the proof (retrying while the contract-db is unreachable). */
  contractDb: Pick<ContractDbClient, 'peer' | 'verify'>
  timeoutMs: number
  provider: (job: JobRecord) => Handle
  /** Tells a bidder its bid is given up (`/dms/job/bid-release`), best effort. */
  release: (job: JobRecord, bid: Bid) => void
  /** Tells every other bidder of the round that it lost (once the contract is active). */
  releaseLosers: (job: JobRecord) => void
}

export function closeContractStep(d: CloseContractDeps): Step {
  return async (job, signal) => {
    const bid = job.bids.find((b) => b.bidId === job.winner?.bidId) as Bid
    // Nothing is locked at the contract-db yet: give the bid up and fall back to the next one.
    const refused = (code: string, message: string): ContractRefusal => {
      d.release(job, bid)
      return new ContractRefusal(code, message, { provider: bid.provider, bidId: bid.bidId })
    }
    const now = d.clock.now()
    const terms: ContractTerms = {
      contractId: randomUUID(),
      jobId: job.id,
      bidId: bid.bidId,
      requester: partyOf(d.peerId, d.key.publicKey),
      provider: {
        peer: bid.provider,
        publicKey: keyToString(publicKeyOf(bid.provider)),
      },
      contractDb: d.contractDb.peer,
      resources: job.spec.resources,
      image: job.spec.image,
      maxDurationSeconds: job.spec.maxDurationSeconds,
      pricePerHour: bid.pricePerHour,
      escrow: bid.total,
      bid,
      createdAt: now,
      expiresAt: now + 60_000,
    }
    // The contract-db checks the terms against the embedded bid the same way (consistency.ts):
    // drafted terms it would refuse are not sent to either party.
    const mismatch = termsBidProblem(terms, bid)
    if (mismatch !== undefined)
      throw refused('BAD_TERMS', `the drafted terms do not match the bid: ${mismatch}`)
    const contract: SignedContract = {
      terms,
      requesterSignature: signDoc(d.key, DOMAIN.contract, terms),
    }
    let signed: ContractSignReply
    try {
      signed = await d.actor.request(
        d.provider(job),
        W.contractSign,
        { contract },
        { timeoutMs: d.timeoutMs, signal },
      )
    } catch (err) {
      signal.throwIfAborted()
      // Refused, silent or unreachable: the contract-db has not seen this contract.
      throw refused(codeOf(err), `provider did not countersign: ${(err as Error).message}`)
    }
    if (!verifyDoc(publicKeyOf(bid.provider), DOMAIN.contract, terms, signed.providerSignature))
      throw refused('BAD_PROVIDER_SIGNATURE', 'provider countersignature is invalid')
    contract.providerSignature = signed.providerSignature
    let proof: ContractProof
    try {
      proof = await d.contractDb.verify(contract, { signal, timeoutMs: d.timeoutMs })
    } catch (err) {
      signal.throwIfAborted()
      // A proof that does not check out: the escrow may be locked, so no other bid is tried.
      if (err instanceof BadProofError) throw new JobFailure(err.code, err.message)
      const code = codeOf(err)
      const message = `contract-db refused the contract: ${(err as Error).message}`
      // A refusal (PARTY_NOT_APPROVED, INSUFFICIENT_FUNDS, BAD_TERMS...) locks nothing: the next
      // bid may do. Not after a timeout or an unreachable contract-db (the outcome is unknown or
      // every bid would meet the same), nor CONTRACT_EXISTS (an earlier send may have locked).
      if (
        code !== 'REQUEST_TIMEOUT' &&
        code !== 'UNREACHABLE' &&
        code !== 'CONTRACT_EXISTS' &&
        code !== 'INTERNAL'
      )
        throw refused(code, message)
      throw new JobFailure('CONTRACT_REFUSED', message)
    }
    // Losers keep their reservations until the contract is active, so a refusal can fall back.
    d.releaseLosers(job)
    return { contract, proof }
  }
}
