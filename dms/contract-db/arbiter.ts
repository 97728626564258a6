/**
 * The contract-db's check of a rejected result (specs/contract-db.md, "Rejections"): a requester
 * that settles with `verified = false` would otherwise keep the outputs it fetched and get its
 * escrow back. The contract-db asks the provider for the result (`/dms/job/result-again`, as the
 * contract's contract-db), fetches its output archive and checks it against the receipt the
 * requester submitted, with the same check the requester makes (dms/blobs/outputs-check.ts). The
 * outputs check: the rejection is overruled and the provider is paid by its receipt. They do not
 * (another receipt, a manifest that does not hash to it, an archive that does not hold the
 * manifest's files, a provider that does not answer or send in time): the rejection stands and
 * the escrow is refunded. An archive that checks is kept here for the requester for a while (it
 * pays for it, and its provider may withhold it from the requester); any other is deleted at once.
 */
import type { Clock } from '../../actors/clock.js'
import type { Actor } from '../../actors/actor.js'
import { codeOf } from '../../actors/errors.js'
import type { Logger } from 'pino'
import { fetchAndCheckOutputs } from '../blobs/outputs-check.js'
import type { BlobService } from '../blobs/service.js'
import { DEFAULT_TRANSFER_PACE, transferBudgetMs, type TransferPace } from '../blobs/transfer.js'
import { hashDoc } from '../contracts/canonical.js'
import type { ContractTerms, SignedReceipt } from '../contracts/model.js'
import { termsResources } from '../contracts/terms.js'
import { W } from '../protocol/behaviours.js'
import { handleOf, INBOX } from '../protocol/handles.js'
import type { Arbitration } from './records.js'

export type { Arbitration }

/** Checks a rejected result: how a settle with `verified = false` is decided. */
export interface RejectionArbiter {
  /** What the check found; undefined when this contract-db checks nothing (NO_ARBITER). */
  check(
    terms: ContractTerms,
    receipt: SignedReceipt,
    opts?: { signal?: AbortSignal },
  ): Promise<Arbitration | undefined>
  /** The longest a check of an archive of `bytes` may take (the requester waits that long). */
  budgetMs(bytes: number): number
  /** Drops what it keeps past its time (called by the service's sweep). */
  sweep?(now: number): Promise<void>
}

export interface OutputsArbiterComponents {
  /** The contract-db's actor: it asks the provider and fetches the archive as the contract-db. */
  actor: Actor
  /** Where fetched archives are kept while they are checked (its own store). */
  blobs: BlobService
  clock: Clock
  log: Logger
}

export interface OutputsArbiterInit {
  /** The slowest transfer accepted (as the requester's `outputsPace`). @default DEFAULT_TRANSFER_PACE */
  pace?: TransferPace
  /** Timeout of each request to the provider. @default 10000 */
  requestTimeoutMs?: number
  /** Checks that fetch at once; more wait their turn (disk and bandwidth of the contract-db). @default 4 */
  maxConcurrent?: number
  /**
   * How long the archive of an overruled rejection stays here for its requester to fetch (its
   * provider may withhold it from the requester). @default 3600000 (an hour)
   */
  handOnMs?: number
}

export class OutputsArbiter implements RejectionArbiter {
  /** Checks in progress, by contract: a settle sent again waits for the same check. */
  private readonly inFlight = new Map<string, Promise<Arbitration>>()
  private readonly pace: TransferPace
  private readonly timeoutMs: number
  private readonly maxConcurrent: number
  private running = 0
  private readonly waiting: Array<() => void> = []
  /** Archives of overruled rejections kept for their requester, until when (clock ms). */
  private readonly handedOn = new Map<string, { peer: string; until: number }>()
  private readonly handOnMs: number

  constructor(
    private readonly c: OutputsArbiterComponents,
    init: OutputsArbiterInit = {},
  ) {
    this.pace = init.pace ?? DEFAULT_TRANSFER_PACE
    this.timeoutMs = init.requestTimeoutMs ?? 10_000
    this.maxConcurrent = init.maxConcurrent ?? 4
    this.handOnMs = init.handOnMs ?? 3_600_000
  }

  /** Drops the handed-on archives whose time is over (the service's sweep calls it). */
  async sweep(now: number): Promise<void> {
    for (const [sha256, kept] of [...this.handedOn]) {
      if (kept.until > now) continue
      this.handedOn.delete(sha256)
      await this.c.blobs.revoke(kept.peer, sha256)
      await this.drop(sha256)
    }
  }

  private async drop(sha256: string): Promise<void> {
    await this.c.blobs.store
      .delete(sha256)
      .catch((err: unknown) => this.c.log.warn({ err, sha256 }, 'checked archive not deleted'))
  }

  budgetMs(bytes: number): number {
    return this.timeoutMs + transferBudgetMs(bytes, this.pace)
  }

  check(
    terms: ContractTerms,
    receipt: SignedReceipt,
    opts: { signal?: AbortSignal } = {},
  ): Promise<Arbitration> {
    const running = this.inFlight.get(terms.contractId)
    if (running !== undefined) return running
    const checking = this.inTurn(() => this.run(terms, receipt, opts.signal)).finally(() =>
      this.inFlight.delete(terms.contractId),
    )
    this.inFlight.set(terms.contractId, checking)
    return checking
  }

  /** Runs `fn` once fewer than `maxConcurrent` checks run. */
  private async inTurn<T>(fn: () => Promise<T>): Promise<T> {
    // A finished check hands its turn to the next waiting one (`running` stays counted).
    if (this.running >= this.maxConcurrent) await new Promise<void>((go) => this.waiting.push(go))
    else this.running++
    try {
      return await fn()
    } finally {
      const next = this.waiting.shift()
      if (next !== undefined) next()
      else this.running--
    }
  }

  private async run(t: ContractTerms, receipt: SignedReceipt, signal?: AbortSignal): Promise<Arbitration> {
    const upheld = (reason: string): Arbitration => ({ outcome: 'upheld', reason, at: this.c.clock.now() })
    const provider = { peer: t.provider.peer, addrs: [] as string[] }
    let result
    try {
      result = await this.c.actor.request(
        handleOf(provider.peer, INBOX.provider),
        W.resultAgain,
        { contractId: t.contractId, jobId: t.jobId },
        { timeoutMs: this.timeoutMs, signal },
      )
    } catch (err) {
      return upheld(`the provider did not give its result to the contract-db (${codeOf(err)})`)
    }
    if (result.jobId !== t.jobId || hashDoc(result.receipt?.receipt) !== hashDoc(receipt.receipt))
      return upheld('the provider answered with another receipt than the one it gave the requester')
    const size = result.archive?.size ?? 0
    const budgetMs = transferBudgetMs(size, this.pace)
    const check = await fetchAndCheckOutputs(this.c.actor, this.c.blobs, provider, result, {
      signal,
      timeoutMs: this.timeoutMs,
      deadline: { at: this.c.clock.now() + budgetMs, clock: this.c.clock, budgetMs },
      diskBytes: termsResources(t).diskBytes,
    })
    if (result.archive !== undefined && !check.ok) await this.drop(result.archive.sha256)
    if (!check.ok) return upheld(check.reason)
    // The requester pays for these outputs now: it may fetch them here for a while, so a provider
    // that served the contract-db but not its requester is not paid for outputs it withheld.
    if (result.archive !== undefined) {
      const sha256 = result.archive.sha256
      await this.c.blobs.grant(t.requester.peer, sha256)
      this.handedOn.set(sha256, { peer: t.requester.peer, until: this.c.clock.now() + this.handOnMs })
    }
    return {
      outcome: 'overruled',
      reason: `the contract-db fetched the outputs (${size} bytes) and they match the provider's receipt`,
      at: this.c.clock.now(),
    }
  }
}

/** No check (undefined): a rejection stands unchecked (parts tested without a data plane). */
export const NO_ARBITER: RejectionArbiter = {
  check: () => Promise.resolve(undefined),
  budgetMs: () => 0,
}
