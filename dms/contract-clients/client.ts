/**
 * The contract-db client both parties use: verify a two-party contract, settle it, terminate it,
 * ask for this node's approval credential and its balance. Requests are retried with backoff on the injected
 * clock while the contract-db may be restarting, and what it signs is checked before it is used
 * (the proof of contract, the settlement, the credential). Spec: specs/contract-db.md,
 * specs/protocol.md ("Contract closure").
 */
import type { Clock } from '../../actors/clock.js'
import type { BehaviourDef } from '../../actors/codec.js'
import type { Handle } from '../../actors/envelope.js'
import { DmsError, isCode } from '../../actors/errors.js'
import { exponential, retry } from '../../actors/retry.js'
import type { RequestOptions } from '../../actors/system.js'
import { W } from '../protocol/behaviours.js'
import { handleOf, INBOX, publicKeyOf } from '../protocol/handles.js'
import type { SettleRequest, TerminateRequest } from '../protocol/messages.js'
import { checkApproval } from '../contracts/approval.js'
import { checkFunds } from '../contracts/funds.js'
import { hashDoc, verifyDoc } from '../contracts/canonical.js'
import {
  DOMAIN,
  type ApprovalCredential,
  type ContractProof,
  type ContractTerms,
  type FundsProof,
  type Settlement,
  type SignedContract,
  type SignedStartNote,
  type StartAck,
} from '../contracts/model.js'

/** What the client needs of an actor: typed requests (an `Actor` is one). */
export interface Requester {
  request<Req, Rep>(
    to: Handle,
    behaviour: BehaviourDef<Req, Rep>,
    payload: Req,
    opts?: RequestOptions,
  ): Promise<Rep>
  /**
   * Drops the connections to a peer that stopped answering, so the next request dials another of
   * its addresses (an `Actor` does). Without it a silent contract-db keeps its connection.
   */
  disconnect?(peer: string): Promise<void>
}

export interface ContractDbClientComponents {
  /** Sends the requests (the job's actor, the provider's...); replies come back to it. */
  actor: Requester
  /** Runs the request timeouts' backoff between attempts. */
  clock: Clock
}

export interface ContractDbClientInit {
  /** The contract-db: peer id, and addresses to dial (empty: found through the peer store). */
  contractDb: { peer: string; addrs: readonly string[] }
  /** Per-request timeout. @default 10000 */
  timeoutMs?: number
  /**
   * Tries of a verify, settle or terminate while the contract-db is unreachable or silent (it may
   * be restarting). @default 4
   */
  attempts?: number
  /** Wait after the first failed try; doubles after each. @default 1000 */
  backoffMs?: number
}

/** What a settlement is checked against: the contract's id and escrow. */
export type SettlementTerms = Pick<ContractTerms, 'contractId' | 'escrow'>

/** Options of one call. */
export interface CallOptions {
  signal?: AbortSignal
  /** @default the client's timeoutMs */
  timeoutMs?: number
}

/** The proof of contract is not the contract-db's signature over these terms. */
export class BadProofError extends DmsError {
  constructor(message: string) {
    super('BAD_PROOF', message)
  }
}

/** The settlement is not the contract-db's signature over this contract's escrow. */
export class BadSettlementError extends DmsError {
  constructor() {
    super('BAD_SETTLEMENT', 'settlement is not signed by the contract-db for this contract')
  }
}

/** The credential is not a valid approval of this node by this contract-db. */
export class BadApprovalError extends DmsError {
  constructor(problem: string) {
    super('BAD_APPROVAL', `the contract-db sent a bad credential: ${problem}`)
  }
}

/** The funds proof is not a valid statement about this node by this contract-db. */
export class BadFundsProofError extends DmsError {
  constructor(problem: string) {
    super('BAD_FUNDS_PROOF', `the contract-db sent a bad funds proof: ${problem}`)
  }
}

export class ContractDbClient {
  private readonly timeoutMs: number
  private readonly attempts: number
  private readonly backoffMs: number

  constructor(
    private readonly c: ContractDbClientComponents,
    private readonly init: ContractDbClientInit,
  ) {
    this.timeoutMs = init.timeoutMs ?? 10_000
    this.attempts = init.attempts ?? 4
    this.backoffMs = init.backoffMs ?? 1000
  }

  get peer(): string {
    return this.init.contractDb.peer
  }

  /** The contract-db's inbox (throws BadPeerIdError when its peer id is not an Ed25519 one). */
  handle(): Handle {
    return handleOf(this.peer, INBOX.contractDb, this.init.contractDb.addrs)
  }

  /**
   * Has the contract-db verify a contract both parties signed and lock its escrow; resolves with
   * its proof, checked. Sent again (with backoff) while the contract-db is unreachable or silent:
   * verify is idempotent there (the same terms from their requester get the stored proof back),
   * so a resend after a lost answer locks nothing twice. Its refusals reject as RemoteError with
   * their code.
   */
  async verify(contract: SignedContract, opts: CallOptions = {}): Promise<ContractProof> {
    const { signal } = opts
    const proof = await this.retried(
      () => this.ask(W.contractVerify, { contract }, opts),
      ['UNREACHABLE', 'REQUEST_TIMEOUT'],
      signal,
    )
    this.checkProof(proof, contract.terms)
    return proof
  }

  /**
   * Settles a contract on the provider's receipt and the requester's signed verification;
   * resolves with the settlement, checked. See `close` for the retries.
   */
  settle(req: SettleRequest, terms: SettlementTerms, opts: CallOptions = {}): Promise<Settlement> {
    return this.close(W.settle, req, terms, opts)
  }

  /** Closes a contract without a normal settlement (TERMINATION reasons); see `close`. */
  terminate(req: TerminateRequest, terms: SettlementTerms, opts: CallOptions = {}): Promise<Settlement> {
    return this.close(W.terminate, req, terms, opts)
  }

  /**
   * The provider's start note of a contract's run (specs/contract-db.md, "Start notes"): resolves
   * once the contract-db recorded it. Sent again (with backoff) while the contract-db is
   * unreachable or silent: a repeated note gets the same answer. Refused START_DEADLINE_PASSED
   * past the contract's `startBy` (the contract is expired then).
   */
  async started(note: SignedStartNote, opts: CallOptions = {}): Promise<StartAck> {
    const ack = await this.retried(
      () => this.ask(W.contractStarted, { note }, opts),
      ['UNREACHABLE', 'REQUEST_TIMEOUT'],
      opts.signal,
    )
    if (ack.contractId !== note.note.contractId)
      throw new DmsError('BAD_START_ACK', 'the contract-db acknowledged the start of another contract')
    return ack
  }

  /**
   * Asks for this node's approval credential once (its holder retries on its own schedule) and
   * checks it names `self`, this contract-db, and is valid now.
   */
  async approval(self: string, opts: CallOptions = {}): Promise<ApprovalCredential> {
    const cred = await this.ask(W.approval, {}, opts)
    const problem = checkApproval(cred, { peer: self, contractDb: this.peer, now: this.c.clock.now() })
    if (problem !== undefined) throw new BadApprovalError(problem)
    return cred
  }

  /**
   * Asks for a proof of this node's funds and checks it names `self`, this contract-db, and is
   * valid now (its holder, FundsClient, decides when to ask again). Sent again (with backoff)
   * while the contract-db is unreachable or silent: it may be restarting, and a job waits for it.
   */
  async funds(self: string, opts: CallOptions = {}): Promise<FundsProof> {
    const proof = await this.retried(
      () => this.ask(W.funds, {}, opts),
      ['UNREACHABLE', 'REQUEST_TIMEOUT'],
      opts.signal,
    )
    const problem = checkFunds(proof, { peer: self, contractDb: this.peer, now: this.c.clock.now(), need: 0 })
    if (problem !== undefined) throw new BadFundsProofError(problem)
    return proof
  }

  /** This node's own account at the contract-db: what it can spend, and what is in escrow. */
  balance(opts: CallOptions = {}): Promise<{ balance: number; escrow: number }> {
    return this.retried(() => this.ask(W.balance, {}, opts), ['UNREACHABLE'], opts.signal)
  }

  /**
   * Settle or terminate, sent again (with backoff) while the contract-db is unreachable or silent:
   * closing is idempotent there, and a contract already closed (a reply lost on the way) is
   * refused CONTRACT_NOT_ACTIVE with the settlement it kept, which is used.
   */
  private async close<Req>(
    behaviour: BehaviourDef<Req, Settlement>,
    payload: Req,
    terms: SettlementTerms,
    opts: CallOptions,
  ): Promise<Settlement> {
    const settlement = await this.retried(
      async () => {
        try {
          return await this.ask(behaviour, payload, opts)
        } catch (err) {
          const kept = (err as { data?: { settlement?: Settlement } }).data?.settlement
          if (isCode(err, 'CONTRACT_NOT_ACTIVE') && kept !== undefined) return kept
          throw err
        }
      },
      ['UNREACHABLE', 'REQUEST_TIMEOUT'],
      opts.signal,
    )
    this.checkSettlement(settlement, terms)
    return settlement
  }

  /**
   * One request. An instance that lets it time out is dropped (its connections closed), so the
   * next request dials the contract-db's other addresses first: with several instances under one
   * identity that is another instance (specs/contract-db.md, "Failover between instances").
   */
  private async ask<Req, Rep>(
    behaviour: BehaviourDef<Req, Rep>,
    payload: Req,
    opts: CallOptions,
  ): Promise<Rep> {
    try {
      return await this.c.actor.request(this.handle(), behaviour, payload, {
        timeoutMs: opts.timeoutMs ?? this.timeoutMs,
        signal: opts.signal,
      })
    } catch (err) {
      if (isCode(err, 'REQUEST_TIMEOUT')) await this.c.actor.disconnect?.(this.peer).catch(() => undefined)
      throw err
    }
  }

  /**
   * `fn` tried `attempts` times while it fails with one of `codes` (every contract-db request is
   * safe to repeat: specs/contract-db.md, "Failover between instances"). After a silence, with
   * another address to try, the next try goes at once; otherwise it waits the backoff. The last
   * failure is what rejects, so callers keep branching on its code.
   */
  private retried<T>(fn: () => Promise<T>, codes: string[], signal: AbortSignal | undefined): Promise<T> {
    const backoff = exponential(this.backoffMs)
    let silence = false
    const elsewhere = this.init.contractDb.addrs.length > 1
    return retry(
      async () => {
        try {
          return await fn()
        } catch (err) {
          silence = isCode(err, 'REQUEST_TIMEOUT')
          throw err
        }
      },
      {
        attempts: this.attempts,
        backoffMs: (failed) => (silence && elsewhere ? 0 : backoff(failed)),
        // An abort during the wait rejects with the signal's reason.
        retryIf: (err: unknown) => isCode(err, codes),
        clock: this.c.clock,
        signal,
      },
    )
  }

  /** The proof is signed by this contract-db, over exactly these terms and their escrow. */
  private checkProof(proof: ContractProof, terms: ContractTerms): void {
    const { signature, ...body } = proof
    if (!verifyDoc(publicKeyOf(this.peer), DOMAIN.proof, body, signature))
      throw new BadProofError('proof of contract is not signed by the contract-db')
    if (
      proof.contractId !== terms.contractId ||
      proof.termsHash !== hashDoc(terms) ||
      proof.escrowLocked !== terms.escrow ||
      proof.contractDb !== this.peer
    )
      throw new BadProofError('proof of contract is for other terms')
  }

  /** The settlement is signed by this contract-db, for this contract, and splits its whole escrow. */
  private checkSettlement(s: Settlement, terms: SettlementTerms): void {
    const { signature, ...body } = s
    if (
      s.contractId !== terms.contractId ||
      s.paidToProvider + s.refundedToRequester !== terms.escrow ||
      !verifyDoc(publicKeyOf(this.peer), DOMAIN.settlement, body, signature)
    )
      throw new BadSettlementError()
  }
}
