/**
 * The `contracting` step: draft the terms from the winning bid, have the provider countersign
 * (which locks the bid if it is still only reserved: the lock folded into the contract), have the
 * contract-db verify them and lock the escrow, and check its proof. A refusal before the
 * contract-db locked anything sends the job back to its next bid (`ContractRefusal`); an outcome
 * that may have locked escrow fails the job; a provider that wants the lock first (`LockFirst`)
 * gets the job request, then the terms again. Spec: specs/protocol.md ("Contract closure", "The
 * lock folded into the contract", "Contracting fallback").
 */
import { codeOf } from '../../../actors/errors.js'
import { keyToString } from '../../../actors/identity.js'
import { signDoc, verifyDoc } from '../../contracts/canonical.js'
import { BadProofError } from '../../contract-clients/client.js'
import { contractIdFor } from '../../contracts/contract-id.js'
import { termsBidProblem } from '../../contracts/consistency.js'
import {
  DOMAIN,
  type ContractProof,
  type ContractTerms,
  type SignedContract,
  type Bid,
} from '../../contracts/model.js'
import { partyOf } from '../../contracts/party.js'
import { startByFor } from '../../contracts/start.js'
import { W } from '../../protocol/behaviours.js'
import { publicKeyOf } from '../../protocol/handles.js'
import type { ContractSignReply } from '../../protocol/messages.js'
import { workloadHash } from '../../workload/hash.js'
import { ContractRefusal, JobFailure, LockFirst, type Step } from '../job-machine.js'
import type { JobRecord } from '../job-record.js'
import { workloadOfJob } from '../job-workload.js'
import type { StepDeps } from './deps.js'
import { releaseBid, releaseLosers, winnerHandle } from './providers.js'

export type CloseContractDeps = Pick<
  StepDeps,
  'actor' | 'session' | 'key' | 'clock' | 'peerId' | 'config' | 'written'
> & {
  /** Verifies the contract and checks the proof (retrying while the contract-db is unreachable). */
  contractDb: Pick<StepDeps['contractDb'], 'peer' | 'verify'>
}

/** How long the drafted terms stay open for the contract-db to verify. */
export const TERMS_TTL_MS = 60_000

/**
 * Contract-db refusals after which the next bid is not tried: the outcome is unknown (a timeout,
 * an error inside it), every bid would meet the same (unreachable), or an earlier send may have
 * locked the escrow (CONTRACT_EXISTS).
 */
const NO_FALLBACK = ['REQUEST_TIMEOUT', 'UNREACHABLE', 'CONTRACT_EXISTS', 'INTERNAL']

/**
 * The provider's refusals of terms for a reserved bid that are the lock's own (what a job request
 * would have been refused with), and silence: the bid was not taken, as a refused job request.
 */
const LOCK_REFUSALS = [
  'UNKNOWN_BID',
  'NOT_YOUR_BID',
  'BID_NOT_OPEN',
  'LOCK_FAILED',
  'REQUEST_TIMEOUT',
  'UNREACHABLE',
]

export function closeContractStep(d: CloseContractDeps): Step {
  return async (job, signal) => {
    const bid = job.bids.find((b) => b.bidId === job.winner?.bidId) as Bid
    // Nothing is locked at the contract-db yet: give the bid up and fall back to the next one.
    const refused = (code: string, message: string, step?: 'lock'): ContractRefusal => {
      releaseBid(d, job, bid)
      return new ContractRefusal(code, message, { provider: bid.provider, bidId: bid.bidId }, step)
    }
    const folded = !lockedFirst(job)
    // Drafted at the time the job entered `contracting` (stored with the job), so a requester
    // restored in this state drafts the very same terms and contract id: the provider countersigns
    // them again and the contract-db's verify is idempotent, so nothing is locked twice.
    const now = [...job.history].reverse().find((h) => h.state === 'contracting')?.at ?? d.clock.now()
    const terms: ContractTerms = {
      contractId: contractIdFor({ requester: d.peerId, jobId: job.id, bidId: bid.bidId, createdAt: now }),
      jobId: job.id,
      bidId: bid.bidId,
      requester: partyOf(d.peerId, d.key.publicKey),
      provider: {
        peer: bid.provider,
        publicKey: keyToString(publicKeyOf(bid.provider)),
      },
      contractDb: d.contractDb.peer,
      // What was bid for (image, resources, max duration, price) is the embedded bid's, which the
      // terms reference and copy none of (specs/protocol.md, "Contract closure").
      // What runs, signed: the invoke step sends this very workload (invoke.ts), and the provider
      // refuses any other (specs/protocol.md, "Contract terms").
      workloadHash: workloadHash(workloadOfJob(job.spec)),
      escrow: bid.total,
      bid,
      createdAt: now,
      expiresAt: now + TERMS_TTL_MS,
      // Not started by then, the contract-db expires it with a full refund; counted from the bid's
      // earliestStart when the provider bid for a later start (start.ts).
      startBy: startByFor(now, bid, d.config.startGraceSeconds),
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
    // The job is stored in `contracting` (with the stamp the terms are drafted from) before the
    // terms leave: a requester killed after sending them is restored here, not earlier, so it
    // drafts the same terms again instead of bidding anew while this contract goes on.
    // A job that cannot be stored (a full disk) sends nothing more: its bid is given up.
    try {
      await d.written?.()
    } catch (err) {
      releaseBid(d, job, bid)
      throw new JobFailure(codeOf(err), (err as Error).message)
    }
    signal.throwIfAborted()
    let signed: ContractSignReply
    try {
      signed = await d.actor.request(
        winnerHandle(d.session, job),
        W.contractSign,
        { contract },
        { timeoutMs: d.config.requestTimeoutMs, signal },
      )
    } catch (err) {
      signal.throwIfAborted()
      // A provider without the folded lock (an older version): lock the bid first, then sign.
      const code = codeOf(err)
      if (code === 'BID_NOT_LOCKED' && folded)
        throw new LockFirst(`provider asks for the lock first: ${(err as Error).message}`)
      // Refused, silent or unreachable: the contract-db has not seen this contract.
      const message = `provider did not countersign: ${(err as Error).message}`
      throw refused(code, message, folded && LOCK_REFUSALS.includes(code) ? 'lock' : undefined)
    }
    if (!verifyDoc(publicKeyOf(bid.provider), DOMAIN.contract, terms, signed.providerSignature))
      throw refused('BAD_PROVIDER_SIGNATURE', 'provider countersignature is invalid')
    contract.providerSignature = signed.providerSignature
    let proof: ContractProof
    try {
      proof = await d.contractDb.verify(contract, { signal, timeoutMs: d.config.requestTimeoutMs })
    } catch (err) {
      signal.throwIfAborted()
      // A proof that does not check out: the escrow may be locked, so no other bid is tried.
      if (err instanceof BadProofError) throw new JobFailure(err.code, err.message)
      const code = codeOf(err)
      const message = `contract-db refused the contract: ${(err as Error).message}`
      // A refusal (PARTY_NOT_APPROVED, INSUFFICIENT_FUNDS, BAD_TERMS...) locks nothing: the next
      // bid may do.
      if (!NO_FALLBACK.includes(code)) throw refused(code, message)
      throw new JobFailure('CONTRACT_REFUSED', message)
    }
    // Losers keep their reservations until the contract is active, so a refusal can fall back.
    releaseLosers(d, job)
    return { contract, proof }
  }
}

/** Whether the job came to this `contracting` from `requesting` (its bid locked by a job request). */
function lockedFirst(job: JobRecord): boolean {
  const i = job.history.findLastIndex((h) => h.state === 'contracting')
  return i > 0 && job.history[i - 1].state === 'requesting'
}
