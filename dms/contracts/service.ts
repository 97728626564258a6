import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { keyFromString } from '../../actors/identity.js'
import type { Actor, ActorSystem, Message } from '../../actors/system.js'
import type { KeyPair } from '../../actors/identity.js'
import { B, INBOX, type SettleRequest, type ContractVerifyRequest } from '../messages.js'
import { Repo, type Db } from '../store/db.js'
import { hashDoc, signDoc, verifyDoc } from './canonical.js'
import { REFUSAL, refuse } from './errors.js'
import { costOf, DOMAIN, type ContractProof, type SignedContract, type Settlement } from './model.js'
import { partyIsConsistent } from './party.js'

export interface Account {
  peer: string
  /** Spendable balance. */
  balance: number
  /** Locked in active contracts. */
  escrow: number
}

export type ContractState = 'active' | 'settled' | 'terminated'

export interface ContractRecord {
  contract: SignedContract
  state: ContractState
  proof: ContractProof
  settlement?: Settlement
  reason?: string
  history: Array<{ state: ContractState; at: number }>
}

export interface ContractDbInit {
  /** Peers approved at start (added, never removed, by this list). @default [] */
  approve?: string[]
  /** Opening balances, applied only to accounts that do not exist yet. @default {} */
  fund?: Record<string, number>
}

/**
 * The contract-db verifier service: approved entities, accounts, contract verification with
 * escrow, settlement. One actor; its mailbox handles one request at a time, so the balance checks
 * and the batch that follows them cannot interleave.
 */
export class ContractDbService {
  private actor?: Actor
  readonly approved: Repo<{ peer: string; approvedAt: number }>
  readonly accounts: Repo<Account>
  readonly contracts: Repo<ContractRecord>

  constructor(
    private readonly components: { system: ActorSystem; key: KeyPair; db: Db; clock: Clock; log: Logger },
    private readonly init: ContractDbInit = {},
  ) {
    this.approved = new Repo(components.db, 'cdb-approved')
    this.accounts = new Repo(components.db, 'cdb-accounts')
    this.contracts = new Repo(components.db, 'cdb-contracts')
  }

  get peerId(): string {
    return this.components.system.peerId
  }

  async start(): Promise<void> {
    if (this.actor !== undefined) return
    const now = this.components.clock.now()
    for (const peer of this.init.approve ?? []) await this.approve(peer, now)
    for (const [peer, amount] of Object.entries(this.init.fund ?? {})) {
      if ((await this.accounts.get(peer)) === undefined) await this.credit(peer, amount)
    }
    this.actor = this.components.system
      .spawn(INBOX.contractDb, this.components.key)
      .on(B.contractVerify, (m) => this.verify(m as Message<ContractVerifyRequest>))
      .on(B.settle, (m) => this.settle(m as Message<SettleRequest>))
  }

  stop(): void {
    this.actor?.stop()
    this.actor = undefined
  }

  async approve(peer: string, at = this.components.clock.now()): Promise<void> {
    if ((await this.approved.get(peer)) === undefined) await this.approved.put(peer, { peer, approvedAt: at })
  }

  async credit(peer: string, amount: number): Promise<Account> {
    if (!Number.isSafeInteger(amount) || amount <= 0) throw new Error('credit must be a positive integer')
    const acc = (await this.accounts.get(peer)) ?? { peer, balance: 0, escrow: 0 }
    acc.balance += amount
    await this.accounts.put(peer, acc)
    return acc
  }

  async account(peer: string): Promise<Account> {
    return (await this.accounts.get(peer)) ?? { peer, balance: 0, escrow: 0 }
  }

  private async verify(msg: Message<ContractVerifyRequest>): Promise<ContractProof> {
    const { contract } = msg.payload
    const t = contract?.terms
    if (t === undefined || typeof t.contractId !== 'string')
      throw refuse(REFUSAL.badTerms, 'no contract terms')
    const now = this.components.clock.now()
    if (t.contractDb !== this.peerId)
      throw refuse(REFUSAL.wrongContractDb, 'contract names another contract-db')
    if (msg.peer !== t.requester.peer) throw refuse(REFUSAL.notParty, 'only the requester submits a contract')
    for (const [role, p] of [
      ['requester', t.requester],
      ['provider', t.provider],
    ] as const) {
      if (!partyIsConsistent(p)) throw refuse(REFUSAL.badParty, `${role} key does not match its peer id`)
      if ((await this.approved.get(p.peer)) === undefined)
        throw refuse(REFUSAL.notApproved, `${role} ${p.peer} is not an approved entity`)
    }
    if (!verifyDoc(keyFromString(t.requester.publicKey), DOMAIN.contract, t, contract.requesterSignature))
      throw refuse(REFUSAL.badSignature, 'requester signature is invalid')
    if (
      contract.providerSignature === undefined ||
      !verifyDoc(keyFromString(t.provider.publicKey), DOMAIN.contract, t, contract.providerSignature)
    )
      throw refuse(REFUSAL.badSignature, 'provider signature is missing or invalid')
    if (t.expiresAt <= now) throw refuse(REFUSAL.expired, 'contract expired before verification')
    if ((await this.contracts.get(t.contractId)) !== undefined)
      throw refuse(REFUSAL.duplicate, `contract ${t.contractId} was already submitted`)
    const minEscrow = costOf(t.maxDurationSeconds, t.pricePerHour, Number.MAX_SAFE_INTEGER)
    if (!Number.isSafeInteger(t.escrow) || t.escrow < 0 || (t.pricePerHour > 0 && t.escrow < minEscrow))
      throw refuse(REFUSAL.badTerms, `escrow must cover price x max duration (${minEscrow})`)

    const acc = await this.account(t.requester.peer)
    if (acc.balance < t.escrow)
      throw refuse(
        REFUSAL.insufficientFunds,
        `requester balance ${acc.balance} is short of escrow ${t.escrow} by ${t.escrow - acc.balance}`,
        {
          shortfall: t.escrow - acc.balance,
        },
      )
    const body = {
      contractId: t.contractId,
      termsHash: hashDoc(t),
      escrowLocked: t.escrow,
      issuedAt: now,
      contractDb: this.peerId,
    }
    const proof: ContractProof = { ...body, signature: signDoc(this.components.key, DOMAIN.proof, body) }
    const record: ContractRecord = {
      contract,
      state: 'active',
      proof,
      history: [{ state: 'active', at: now }],
    }
    await this.components.db.batch([
      this.accounts.putOp(acc.peer, {
        ...acc,
        balance: acc.balance - t.escrow,
        escrow: acc.escrow + t.escrow,
      }),
      this.contracts.putOp(t.contractId, record),
    ])
    this.components.log.info(
      { contractId: t.contractId, escrow: t.escrow },
      'contract verified, escrow locked',
    )
    return proof
  }

  private async settle(msg: Message<SettleRequest>): Promise<Settlement> {
    const { contractId, receipt, verified } = msg.payload
    const rec = await this.contracts.get(contractId)
    if (rec === undefined) throw refuse(REFUSAL.unknown, `no contract ${contractId}`)
    const t = rec.contract.terms
    if (msg.peer !== t.requester.peer) throw refuse(REFUSAL.notParty, 'only the requester settles a contract')
    if (rec.state !== 'active') throw refuse(REFUSAL.notActive, `contract ${contractId} is ${rec.state}`)
    if (
      receipt?.receipt?.contractId !== contractId ||
      !verifyDoc(keyFromString(t.provider.publicKey), DOMAIN.receipt, receipt.receipt, receipt.signature)
    )
      throw refuse(REFUSAL.badSignature, 'receipt is not signed by the provider for this contract')

    const now = this.components.clock.now()
    const billedSeconds = Math.min(Math.max(0, receipt.receipt.usage.wallSeconds), t.maxDurationSeconds)
    const paid = verified ? costOf(billedSeconds, t.pricePerHour, t.escrow) : 0
    const refund = t.escrow - paid
    const body = {
      contractId,
      paidToProvider: paid,
      refundedToRequester: refund,
      billedSeconds,
      settledAt: now,
      contractDb: this.peerId,
    }
    const settlement: Settlement = {
      ...body,
      signature: signDoc(this.components.key, DOMAIN.settlement, body),
    }
    const req = await this.account(t.requester.peer)
    const ops = [
      this.contracts.putOp(contractId, {
        ...rec,
        state: verified ? 'settled' : 'terminated',
        reason: verified ? undefined : 'REQUESTER_REJECTED_RESULT',
        settlement,
        history: [...rec.history, { state: verified ? 'settled' : 'terminated', at: now }],
      }),
    ]
    if (t.provider.peer === t.requester.peer) {
      ops.push(
        this.accounts.putOp(req.peer, {
          ...req,
          balance: req.balance + t.escrow,
          escrow: req.escrow - t.escrow,
        }),
      )
    } else {
      const prov = await this.account(t.provider.peer)
      ops.push(
        this.accounts.putOp(req.peer, {
          ...req,
          balance: req.balance + refund,
          escrow: req.escrow - t.escrow,
        }),
      )
      ops.push(this.accounts.putOp(prov.peer, { ...prov, balance: prov.balance + paid }))
    }
    await this.components.db.batch(ops as never)
    this.components.log.info({ contractId, paid, refund }, 'contract settled')
    // Best effort: the provider learns it was paid. The requester also holds the signed settlement.
    const providerHandle = {
      publicKey: keyFromString(t.provider.publicKey),
      peer: t.provider.peer,
      inbox: INBOX.provider,
      addrs: [],
    }
    void this.actor?.send(providerHandle as never, B.settled, settlement).catch(() => {})
    return settlement
  }
}
