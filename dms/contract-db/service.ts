import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { SerialQueue } from '../../actors/serial.js'
import { keyFromString, type KeyPair } from '../../actors/identity.js'
import type { Actor, ActorSystem } from '../../actors/system.js'
import { W } from '../protocol/behaviours.js'
import { handleOf, INBOX, jobInbox } from '../protocol/handles.js'
import type { SettleRequest, TerminateRequest } from '../protocol/messages.js'
import { Repo, type Db } from '../store/db.js'
import { hashDoc, signDoc, verifyDoc } from '../contracts/canonical.js'
import { nextContractState, type ContractEvent, type ContractState } from './contract-machine.js'
import { REFUSAL, refuse } from '../contracts/errors.js'
import {
  DOMAIN,
  TERMINATION,
  type ContractProof,
  type ContractTerms,
  type Receipt,
  type Settlement,
  type SignedContract,
  type SignedReceipt,
  type TerminationReason,
} from '../contracts/model.js'
import { billableMs, costOfMs, type Amount } from '../contracts/money.js'
import { partyIsConsistent } from '../contracts/party.js'
import { checkBidTerms, checkReceipt, checkVerification } from '../contracts/checks.js'
import { issueApproval } from '../contracts/approval.js'
import type { ApprovalCredential } from '../contracts/model.js'
import { Approvals } from './approvals.js'
import { billFor } from './billing.js'
import { Accounts, closeMoves, lockMoves, type Move } from './ledger.js'
import {
  SUBLEVEL,
  type Account,
  type ApprovedEntity,
  type ContractRecord,
  type StoredState,
} from './records.js'

export interface ContractDbInit {
  /** Lifetime of the approval credentials it issues. @default APPROVAL_TTL_MS (10 minutes) */
  approvalTtlMs?: number
}

export interface ContractDbComponents {
  system: ActorSystem
  key: KeyPair
  db: Db
  clock: Pick<Clock, 'now'>
  log: Logger
}

/**
 * The contract-db verifier service: approved entities, accounts, contract verification with
 * escrow, settlement and termination. Spec: specs/contract-db.md.
 *
 * Every operation that reads and then writes accounts or contracts runs through one queue
 * (`serial`), whether it came over the network (the actor) or from the operator (REST), so a
 * check and the atomic batch that follows it never interleave with another operation.
 */
export class ContractDbService {
  private actor?: Actor
  private readonly queue = new SerialQueue()
  private readonly approvals: Approvals
  private readonly accounts: Accounts
  private readonly contracts: Repo<ContractRecord>

  constructor(
    private readonly components: ContractDbComponents,
    private readonly init: ContractDbInit = {},
  ) {
    const { db, clock, log } = components
    this.approvals = new Approvals(new Repo(db, SUBLEVEL.approved), { clock, log })
    this.accounts = new Accounts(new Repo(db, SUBLEVEL.accounts), log)
    this.contracts = new Repo(db, SUBLEVEL.contracts)
  }

  get peerId(): string {
    return this.components.system.peerId
  }

  start(): void {
    if (this.actor !== undefined) return
    this.actor = this.components.system
      .spawn(INBOX.contractDb, this.components.key)
      .on(W.contractVerify, (m) => this.verify(m.peer, m.payload.contract))
      .on(W.settle, (m) => this.settle(m.peer, m.payload))
      .on(W.terminate, (m) => this.terminate(m.peer, m.payload))
      .on(W.approval, (m) => this.approvalFor(m.peer))
  }

  stop(): void {
    this.actor?.stop()
    this.actor = undefined
  }

  /** Runs `fn` after every operation queued before it (one at a time). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.run(fn)
  }

  // ---- operator: approvals and accounts ----

  approve(peer: string): Promise<ApprovedEntity> {
    return this.serial(() => this.approvals.approve(peer))
  }

  /** Removes an approval. New contracts naming the peer are refused; active ones still close. */
  revoke(peer: string): Promise<boolean> {
    return this.serial(() => this.approvals.revoke(peer))
  }

  /**
   * `/dms/approval/get`: a short-lived signed credential for an approved peer (the envelope's
   * sender peer, checked against its connection), else NOT_APPROVED. Spec: contract-db.md.
   */
  async approvalFor(peer: string): Promise<ApprovalCredential> {
    if (!(await this.isApproved(peer)))
      throw refuse(
        REFUSAL.notApprovedPeer,
        `${peer} is not approved by this contract-db: its operator runs 'dms contract-db approve ${peer}'`,
      )
    const { key, clock } = this.components
    return issueApproval(key, {
      peer,
      contractDb: this.peerId,
      now: clock.now(),
      ttlMs: this.init.approvalTtlMs,
    })
  }

  isApproved(peer: string): Promise<boolean> {
    return this.approvals.isApproved(peer)
  }

  listApproved(): Promise<ApprovedEntity[]> {
    return this.approvals.list()
  }

  /** Adds test tokens to a peer's balance (operator only: there is no network route for it). */
  credit(peer: string, amount: Amount): Promise<Account> {
    return this.serial(() => this.accounts.credit(peer, amount))
  }

  account(peer: string): Promise<Account> {
    return this.accounts.get(peer)
  }

  listAccounts(): Promise<Account[]> {
    return this.accounts.list()
  }

  contract(id: string): Promise<ContractRecord | undefined> {
    return this.contracts.get(id)
  }

  listContracts(): Promise<ContractRecord[]> {
    return this.contracts.values()
  }

  // ---- the protocol: verify, settle, terminate ----

  /** Verifies a two-party contract, locks its escrow and returns the signed proof. */
  verify(submitter: string, contract: SignedContract | undefined): Promise<ContractProof> {
    return this.serial(() => this.verifyNow(submitter, contract))
  }

  /** Settles an active contract from the provider's receipt and the requester's verification. */
  settle(submitter: string, req: SettleRequest | undefined): Promise<Settlement> {
    return this.serial(() => this.settleNow(submitter, req))
  }

  /** Closes an active contract with a reason code (see TERMINATION). */
  terminate(submitter: string, req: TerminateRequest | undefined): Promise<Settlement> {
    return this.serial(() => this.terminateNow(submitter, req))
  }

  private async verifyNow(submitter: string, contract: SignedContract | undefined): Promise<ContractProof> {
    const t = contract?.terms
    if (t === undefined || t === null || typeof t !== 'object' || typeof t.contractId !== 'string')
      throw refuse(REFUSAL.badTerms, 'no contract terms')
    const now = this.components.clock.now()
    if (t.contractDb !== this.peerId)
      throw refuse(REFUSAL.wrongContractDb, 'contract names another contract-db')
    if (submitter !== t.requester?.peer)
      throw refuse(REFUSAL.notParty, 'only the requester submits a contract')
    for (const [role, p] of [
      ['requester', t.requester],
      ['provider', t.provider],
    ] as const) {
      if (p === undefined || !partyIsConsistent(p))
        throw refuse(REFUSAL.badParty, `${role} key does not match its peer id`)
      if (!(await this.isApproved(p.peer)))
        throw refuse(REFUSAL.notApproved, `${role} ${p.peer} is not an approved entity`, { peer: p.peer })
    }
    if (!verifyDoc(keyFromString(t.requester.publicKey), DOMAIN.contract, t, contract!.requesterSignature))
      throw refuse(REFUSAL.badSignature, 'requester signature is invalid')
    if (
      typeof contract!.providerSignature !== 'string' ||
      !verifyDoc(keyFromString(t.provider.publicKey), DOMAIN.contract, t, contract!.providerSignature)
    )
      throw refuse(REFUSAL.badSignature, 'provider signature is missing or invalid')
    // A replay is named as such, even once the contract has expired.
    if ((await this.contracts.get(t.contractId)) !== undefined)
      throw refuse(REFUSAL.duplicate, `contract ${t.contractId} was already submitted`)
    if (!(typeof t.expiresAt === 'number' && t.expiresAt > now))
      throw refuse(REFUSAL.expired, `contract expired at ${new Date(t.expiresAt).toISOString()}`)
    const badTerms = checkBidTerms(t)
    if (badTerms !== undefined) throw refuse(REFUSAL.badTerms, badTerms)

    const acc = await this.account(t.requester.peer)
    if (acc.balance < t.escrow) {
      const shortfall = t.escrow - acc.balance
      throw refuse(
        REFUSAL.insufficientFunds,
        `requester balance ${acc.balance} is short of escrow ${t.escrow} by ${shortfall}`,
        { shortfall, balance: acc.balance, escrow: t.escrow },
      )
    }
    const state = this.next('proposed', 'VERIFY', t.contractId)
    const body = {
      contractId: t.contractId,
      termsHash: hashDoc(t),
      escrowLocked: t.escrow,
      issuedAt: now,
      contractDb: this.peerId,
    }
    const proof: ContractProof = { ...body, signature: signDoc(this.components.key, DOMAIN.proof, body) }
    const record: ContractRecord = {
      contract: contract!,
      state,
      proof,
      activatedAt: now,
      history: [{ state, at: now }],
    }
    // A volunteer job (escrow 0) is verified and recorded but moves no money.
    await this.commit(record, lockMoves(t))
    this.components.log.info(
      { contractId: t.contractId, escrow: t.escrow },
      'contract verified, escrow locked',
    )
    return proof
  }

  /** The active contract `contractId`, if `submitter` is one of its parties. */
  private async activeFor(
    submitter: string,
    contractId: unknown,
  ): Promise<{ rec: ContractRecord; t: ContractTerms; role: 'requester' | 'provider' }> {
    const rec = typeof contractId === 'string' ? await this.contracts.get(contractId) : undefined
    if (rec === undefined) throw refuse(REFUSAL.unknown, `no contract ${String(contractId)}`)
    const t = rec.contract.terms
    const role =
      submitter === t.requester.peer ? 'requester' : submitter === t.provider.peer ? 'provider' : undefined
    if (role === undefined)
      throw refuse(REFUSAL.notParty, `${submitter} is not a party to contract ${t.contractId}`)
    if (rec.state !== 'active')
      throw refuse(REFUSAL.notActive, `contract ${t.contractId} is already ${rec.state}`, {
        state: rec.state,
        settlement: rec.settlement,
      })
    return { rec, t, role }
  }

  private async settleNow(submitter: string, req: SettleRequest | undefined): Promise<Settlement> {
    const { rec, t } = await this.activeFor(submitter, req?.contractId)
    const receipt = this.checkedReceipt(t, req?.receipt)
    const problem = checkVerification(req?.verification, t.contractId, hashDoc(receipt))
    if (problem !== undefined) throw refuse(REFUSAL.badVerification, problem)
    const v = req!.verification
    if (!verifyDoc(keyFromString(t.requester.publicKey), DOMAIN.verification, v.verification, v.signature))
      throw refuse(REFUSAL.badSignature, 'verification is not signed by the requester')

    const ms = billableMs(receipt.usage.wallSeconds, t.maxDurationSeconds)
    let paid = 0
    if (v.verification.verified) paid = billFor(receipt, ms, t)
    const outcome = v.verification.verified ? 'settled' : 'terminated'
    const reason = v.verification.verified ? undefined : TERMINATION.rejectedResult
    return this.close(rec, submitter, outcome === 'settled' ? 'SETTLE' : 'TERMINATE', { paid, ms, reason })
  }

  private async terminateNow(submitter: string, req: TerminateRequest | undefined): Promise<Settlement> {
    const { rec, t, role } = await this.activeFor(submitter, req?.contractId)
    const reason = req!.reason
    if (reason === TERMINATION.providerFault) {
      return this.close(rec, submitter, 'TERMINATE', { paid: 0, ms: 0, reason, detail: req!.detail })
    }
    if (reason === TERMINATION.requesterCancelled) {
      if (role !== 'requester')
        throw refuse(
          REFUSAL.badReason,
          'only the requester can cancel; a provider terminates with PROVIDER_FAULT',
        )
      // The time used: the provider's receipt when one came, otherwise the time since escrow locked.
      const wallSeconds =
        req!.receipt !== undefined
          ? this.checkedReceipt(t, req!.receipt).usage.wallSeconds
          : (this.components.clock.now() - rec.activatedAt) / 1000
      const ms = billableMs(wallSeconds, t.maxDurationSeconds)
      const paid = Math.min(t.escrow, costOfMs(ms, t.pricePerHour))
      return this.close(rec, submitter, 'TERMINATE', { paid, ms, reason, detail: req!.detail })
    }
    throw refuse(
      REFUSAL.badReason,
      `unknown termination reason ${String(reason)}: use ${TERMINATION.providerFault} or ${TERMINATION.requesterCancelled}`,
    )
  }

  private checkedReceipt(t: ContractTerms, signed: SignedReceipt | undefined): Receipt {
    const problem = checkReceipt(signed, t)
    if (problem !== undefined) throw refuse(REFUSAL.badReceipt, problem)
    if (!verifyDoc(keyFromString(t.provider.publicKey), DOMAIN.receipt, signed!.receipt, signed!.signature))
      throw refuse(REFUSAL.badSignature, 'receipt is not signed by the provider')
    return signed!.receipt
  }

  private next(from: ContractState, event: ContractEvent['type'], id: string): StoredState {
    const to = nextContractState(from, event)
    if (to === undefined || to === 'proposed')
      throw refuse(REFUSAL.notActive, `contract ${id} is ${from}: ${event} not allowed`)
    return to
  }

  /** Pays `paid` to the provider and refunds the rest of the escrow, in one atomic batch. */
  private async close(
    rec: ContractRecord,
    by: string,
    event: 'SETTLE' | 'TERMINATE',
    how: { paid: Amount; ms: number; reason?: TerminationReason; detail?: string },
  ): Promise<Settlement> {
    const t = rec.contract.terms
    const state = this.next(rec.state, event, t.contractId)
    const now = this.components.clock.now()
    const paid = Math.min(how.paid, t.escrow)
    const refund = t.escrow - paid
    const body = {
      contractId: t.contractId,
      outcome: state === 'settled' ? ('settled' as const) : ('terminated' as const),
      ...(how.reason !== undefined ? { reason: how.reason } : {}),
      paidToProvider: paid,
      refundedToRequester: refund,
      billedSeconds: how.ms / 1000,
      settledAt: now,
      contractDb: this.peerId,
    }
    const settlement: Settlement = {
      ...body,
      signature: signDoc(this.components.key, DOMAIN.settlement, body),
    }
    await this.commit(
      {
        ...rec,
        state,
        settlement,
        closedBy: by,
        detail: how.detail,
        history: [...rec.history, { state, at: now }],
      },
      closeMoves(t, paid),
    )
    this.components.log.info(
      { contractId: t.contractId, state, reason: how.reason, paid, refund },
      'contract closed',
    )
    this.notify(t, by, settlement)
    return settlement
  }

  /** A contract's record and the money it moves, in one atomic batch. */
  private async commit(record: ContractRecord, moves: Move[]): Promise<void> {
    const id = record.contract.terms.contractId
    const ops = [this.contracts.putOp(id, record), ...(await this.accounts.opsFor(moves))]
    await this.components.db.batch(ops as never)
  }

  /** Best effort: the party that did not submit also gets the signed settlement. */
  private notify(t: ContractTerms, by: string, settlement: Settlement): void {
    const other =
      by === t.provider.peer
        ? handleOf(t.requester.peer, jobInbox(t.jobId))
        : handleOf(t.provider.peer, INBOX.provider)
    if (other.peer === by) return
    void this.actor?.send(other, W.settled, settlement).catch(() => {})
  }
}
