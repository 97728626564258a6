/**
 * `/dms/contract/verify`: checks a two-party contract (in the order of specs/contract-db.md,
 * "Verify"), signs the proof, and proposes the contract to its machine, which locks the escrow
 * in the batch that stores it.
 */
import type { Logger } from 'pino'
import type { Clock } from '../../../actors/clock.js'
import { isCode } from '../../../actors/errors.js'
import { keyFromString } from '../../../actors/identity.js'
import { hashDoc, verifyDoc } from '../../contracts/canonical.js'
import { checkBidTerms } from '../../contracts/checks.js'
import { REFUSAL, refuse } from '../../contracts/errors.js'
import {
  DOMAIN,
  type ContractProof,
  type ContractTerms,
  type Role,
  type SignedContract,
} from '../../contracts/model.js'
import { contractIdMatches } from '../../contracts/contract-id.js'
import { partyIsConsistent } from '../../contracts/party.js'
import { unsignedWorkloadRefusal } from '../../contracts/signed-workload.js'
import type { ContractInput } from '../contract-machine.js'
import { START_DEADLINE_PASSED } from '../../contracts/start.js'
import { DEADLINES, settleByFor, type DeadlineConfig } from '../deadlines.js'
import type { Account, ContractRecord } from '../records.js'

export interface VerifyDeps {
  /** This contract-db's peer id. */
  self: string
  clock: Pick<Clock, 'now'>
  /** Signs the proof's body with the contract-db's key (under DOMAIN.proof). */
  signProof(body: Omit<ContractProof, 'signature'>): string
  approvals: { rolesOf(peer: string): Promise<readonly Role[] | undefined> }
  accounts: { get(peer: string): Promise<Account> }
  contracts: {
    get(id: string): Promise<ContractRecord | undefined>
    propose(input: ContractInput): Promise<ContractRecord>
    /** How many volunteer contracts (escrow 0) of this requester are active. */
    activeVolunteers(requester: string): Promise<number>
  }
  /** The most volunteer contracts one requester may have active. */
  maxActiveVolunteers: number
  /** For the contract's settleBy, and the latest startBy it accepts. */
  deadlines: Pick<DeadlineConfig, 'settleGraceMs'> & Partial<Pick<DeadlineConfig, 'maxStartDelayMs'>>
  log: Logger
}

export type VerifyHandler = (
  submitter: string,
  contract: SignedContract | undefined,
) => Promise<ContractProof>

export function verifyHandler(d: VerifyDeps): VerifyHandler {
  return async (submitter, contract) => {
    const t = contract?.terms
    if (t === undefined || t === null || typeof t !== 'object' || typeof t.contractId !== 'string')
      throw refuse(REFUSAL.badTerms, 'no contract terms')
    const now = d.clock.now()
    if (t.contractDb !== d.self) throw refuse(REFUSAL.wrongContractDb, 'contract names another contract-db')
    if (submitter !== t.requester?.peer)
      throw refuse(REFUSAL.notParty, 'only the requester submits a contract')
    for (const [role, p] of [
      ['requester', t.requester],
      ['provider', t.provider],
    ] as const) {
      if (p === undefined || !partyIsConsistent(p))
        throw refuse(REFUSAL.badParty, `${role} key does not match its peer id`)
      const roles = await d.approvals.rolesOf(p.peer)
      if (roles === undefined)
        throw refuse(REFUSAL.notApproved, `${role} ${p.peer} is not an approved entity`, { peer: p.peer })
      if (!roles.includes(role))
        throw refuse(REFUSAL.wrongRole, `${p.peer} is not approved as a ${role}`, { peer: p.peer, role })
    }
    const signed = contract!
    if (!verifyDoc(keyFromString(t.requester.publicKey), DOMAIN.contract, t, signed.requesterSignature))
      throw refuse(REFUSAL.badSignature, 'requester signature is invalid')
    if (
      typeof signed.providerSignature !== 'string' ||
      !verifyDoc(keyFromString(t.provider.publicKey), DOMAIN.contract, t, signed.providerSignature)
    )
      throw refuse(REFUSAL.badSignature, 'provider signature is missing or invalid')
    // The id is derived from the requester and its draft: no party occupies another's id.
    if (!contractIdMatches(t))
      throw refuse(
        REFUSAL.badTerms,
        'contractId is not the one derived from the requester, job, bid and createdAt',
      )
    // The same terms sent again by their requester (its answer was lost) get the stored proof
    // while the contract is active; anything else under a stored id is a replay, named as such
    // even once the contract has expired.
    const stored = await d.contracts.get(t.contractId)
    if (stored !== undefined) return storedAnswer(stored, t)
    if (!(typeof t.expiresAt === 'number' && t.expiresAt > now))
      throw refuse(REFUSAL.expired, `contract expired at ${new Date(t.expiresAt).toISOString()}`)
    const badTerms = checkBidTerms(t)
    if (badTerms !== undefined) throw refuse(REFUSAL.badTerms, badTerms)
    // Every contract this contract-db holds signs what runs, so that a dispute over it has the
    // requester's word and the provider's; terms resent for a stored contract were answered above.
    const unsigned = unsignedWorkloadRefusal(t)
    if (unsigned !== undefined) throw unsigned
    // The start deadline (if any; consistency.ts bounded it against the bid): still ahead, and not
    // further than this contract-db holds escrow for. settleBy is counted from it (deadlines.ts).
    if (t.startBy !== undefined && t.startBy <= now)
      throw refuse(START_DEADLINE_PASSED, `startBy ${new Date(t.startBy).toISOString()} has passed`, {
        startBy: t.startBy,
      })
    const maxStartDelayMs = d.deadlines.maxStartDelayMs ?? DEADLINES.maxStartDelayMs
    if (t.startBy !== undefined && t.startBy > now + maxStartDelayMs)
      throw refuse(REFUSAL.badTerms, `startBy may be at most ${maxStartDelayMs / 1000} s after verification`)

    // A volunteer contract locks nothing, so it costs its requester a slot instead.
    if (t.escrow === 0 && (await d.contracts.activeVolunteers(t.requester.peer)) >= d.maxActiveVolunteers)
      throw refuse(
        REFUSAL.tooManyContracts,
        `requester ${t.requester.peer} already has ${d.maxActiveVolunteers} active volunteer contracts: settle or terminate one first`,
        { limit: d.maxActiveVolunteers },
      )
    const acc = await d.accounts.get(t.requester.peer)
    if (acc.balance < t.escrow) {
      const shortfall = t.escrow - acc.balance
      throw refuse(
        REFUSAL.insufficientFunds,
        `requester balance ${acc.balance} is short of escrow ${t.escrow} by ${shortfall}`,
        { shortfall, balance: acc.balance, escrow: t.escrow },
      )
    }
    const settleBy = settleByFor(t, now, d.deadlines)
    const body = {
      contractId: t.contractId,
      termsHash: hashDoc(t),
      escrowLocked: t.escrow,
      issuedAt: now,
      settleBy,
      contractDb: d.self,
    }
    const proof: ContractProof = { ...body, signature: d.signProof(body) }
    try {
      await d.contracts.propose({ contract: signed, proof, activatedAt: now, settleBy })
    } catch (err) {
      // Another instance locked it meanwhile (the same terms sent to both): answered as a repeat.
      const locked = isCode(err, REFUSAL.duplicate) ? await d.contracts.get(t.contractId) : undefined
      if (locked === undefined) throw err
      return storedAnswer(locked, t)
    }
    d.log.info({ contractId: t.contractId, escrow: t.escrow }, 'contract verified, escrow locked')
    return proof
  }
}

/** A stored contract's terms sent again: the stored proof while active, else a replay refused. */
function storedAnswer(stored: ContractRecord, t: ContractTerms): ContractProof {
  if (stored.state === 'active' && hashDoc(stored.contract.terms) === hashDoc(t)) return stored.proof
  throw refuse(REFUSAL.duplicate, `contract ${t.contractId} was already submitted`, { state: stored.state })
}
