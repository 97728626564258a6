/**
 * The provider's books: one entry per contract it ran (sublevel `provider-books`, keyed by
 * contract id), from the invocation (its escrow and `settleBy`, from the contract-db's proof) to
 * the signed settlement, which it checks before it keeps it. Past `settleBy`, an entry with a
 * delivered result and no settlement is claimed: the provider terminates the contract with reason
 * REQUESTER_SILENT and its receipt (specs/contract-db.md, "Claims"), and keeps the settlement it
 * gets. Per requester it counts paid, unpaid and claimed jobs; the bid-request handler declines a
 * requester with more than `maxUnpaidJobs` unpaid or claimed ones. Spec: specs/provider-books.md.
 */
import { STORES } from '../store/tables.js'
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { codeOf } from '../../actors/errors.js'
import { verifyDoc } from '../contracts/canonical.js'
import {
  DOMAIN,
  TERMINATION,
  type ContractProof,
  type Settlement,
  type SignedContract,
  type SignedReceipt,
} from '../contracts/model.js'
import { publicKeyOfPeer } from '../contracts/party.js'
import { Repo, type Db } from '../store/db.js'

export interface BookEntry {
  contractId: string
  jobId: string
  requester: string
  escrow: number
  invokedAt: number
  /** From the proof; absent from proofs of dms 0.1 (such an entry is never claimed). */
  settleBy?: number
  /** The signed receipt of the run, once its result was made. */
  receipt?: SignedReceipt
  /** The contract-db's signed settlement, checked. */
  settlement?: Settlement
  /** The last claim that did not go through, and why. */
  claimError?: { at: number; code: string; message: string }
}

/** Amounts in micro-tokens; counts in contracts. */
export interface BooksSummary {
  /** Paid to this provider on settlements (claims excluded). */
  paid: number
  /** Paid to this provider on its own claims (REQUESTER_SILENT). */
  claimed: number
  /** Returned to requesters out of these contracts' escrow. */
  refunded: number
  /** Escrow of the contracts not settled yet. */
  outstanding: number
  contracts: { settled: number; claimed: number; open: number }
  requesters: Record<string, RequesterBooks>
}

export interface RequesterBooks {
  /** Contracts settled (or terminated) without a claim. */
  paid: number
  /** Contracts with a result delivered and no settlement yet. */
  unpaid: number
  /** Contracts this provider had to claim. */
  claimed: number
}

export interface BooksComponents {
  db: Db
  clock: Clock
  log: Logger
  /** The contract-db whose settlements this provider accepts. */
  contractDb: string
  /** Sends the claim (terminate REQUESTER_SILENT); resolves with the checked settlement. */
  claim(entry: BookEntry & { receipt: SignedReceipt }): Promise<Settlement>
}

const isClaim = (s: Settlement | undefined) => s?.reason === TERMINATION.requesterSilent

export class ProviderBooks {
  /** `settled` (entry): a settlement was kept, a claim's included. */
  readonly events = new EventEmitter()
  private readonly repo: Repo<BookEntry>
  /** Every entry, loaded at start and kept in step with the repo. */
  private entries?: Map<string, BookEntry>

  constructor(private readonly c: BooksComponents) {
    this.repo = new Repo(c.db, STORES.providerBooks.name)
  }

  private async all(): Promise<Map<string, BookEntry>> {
    if (this.entries === undefined)
      this.entries = new Map((await this.repo.values()).map((e) => [e.contractId, e]))
    return this.entries
  }

  private async put(e: BookEntry): Promise<void> {
    await this.repo.put(e.contractId, e)
    ;(await this.all()).set(e.contractId, e)
  }

  /** An invocation was accepted under this proof. */
  async invoked(contract: SignedContract, proof: ContractProof): Promise<void> {
    const t = contract.terms
    if ((await this.all()).has(t.contractId)) return
    await this.put({
      contractId: t.contractId,
      jobId: t.jobId,
      requester: t.requester.peer,
      escrow: t.escrow,
      invokedAt: this.c.clock.now(),
      ...(proof.settleBy !== undefined ? { settleBy: proof.settleBy } : {}),
    })
  }

  /** The run's result (with its signed receipt) was made. */
  async resulted(contractId: string, receipt: SignedReceipt): Promise<void> {
    const e = (await this.all()).get(contractId)
    if (e === undefined || e.receipt !== undefined) return
    await this.put({ ...e, receipt })
  }

  /**
   * A settlement from the contract-db: kept when it is signed by it, for a contract of these
   * books, and splits its escrow. Returns whether it was kept (false: ignored).
   */
  async settled(s: Settlement): Promise<boolean> {
    const e = (await this.all()).get(s?.contractId)
    const key = publicKeyOfPeer(this.c.contractDb)
    if (e === undefined || key === undefined || e.settlement !== undefined) return false
    const { signature, ...body } = s
    if (
      s.contractDb !== this.c.contractDb ||
      s.paidToProvider + s.refundedToRequester !== e.escrow ||
      !verifyDoc(key, DOMAIN.settlement, body, signature)
    ) {
      this.c.log.warn(
        { contractId: s.contractId },
        'settlement ignored: not the contract-db signature for this contract',
      )
      return false
    }
    const kept = { ...e, settlement: s, claimError: undefined }
    await this.put(kept)
    this.events.emit('settled', kept)
    return true
  }

  /** Claims every contract past its settleBy with a result and no settlement; resolves with what was paid. */
  async claimDue(): Promise<Settlement[]> {
    const now = this.c.clock.now()
    const paid: Settlement[] = []
    for (const e of (await this.all()).values()) {
      if (
        e.settlement !== undefined ||
        e.receipt === undefined ||
        e.settleBy === undefined ||
        e.settleBy > now
      )
        continue
      try {
        const s = await this.c.claim({ ...e, receipt: e.receipt })
        if (await this.settled(s)) paid.push(s)
      } catch (err) {
        const claimError = { at: now, code: codeOf(err), message: (err as Error).message }
        this.c.log.warn({ contractId: e.contractId, ...claimError }, 'claim not paid yet')
        await this.put({ ...e, claimError })
      }
    }
    return paid
  }

  /** Unpaid (result delivered, no settlement) and claimed contracts of a requester. */
  async unpaidOf(requester: string): Promise<number> {
    const r = (await this.summary()).requesters[requester]
    return r === undefined ? 0 : r.unpaid + r.claimed
  }

  async list(): Promise<BookEntry[]> {
    return [...(await this.all()).values()]
  }

  async summary(): Promise<BooksSummary> {
    const sum: BooksSummary = {
      paid: 0,
      claimed: 0,
      refunded: 0,
      outstanding: 0,
      contracts: { settled: 0, claimed: 0, open: 0 },
      requesters: {},
    }
    for (const e of (await this.all()).values()) {
      const r = (sum.requesters[e.requester] ??= { paid: 0, unpaid: 0, claimed: 0 })
      const s = e.settlement
      if (s === undefined) {
        sum.outstanding += e.escrow
        sum.contracts.open++
        if (e.receipt !== undefined) r.unpaid++
      } else if (isClaim(s)) {
        sum.claimed += s.paidToProvider
        sum.refunded += s.refundedToRequester
        sum.contracts.claimed++
        r.claimed++
      } else {
        sum.paid += s.paidToProvider
        sum.refunded += s.refundedToRequester
        sum.contracts.settled++
        r.paid++
      }
    }
    return sum
  }
}
