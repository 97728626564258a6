/**
 * Keeps this node's approval credential from its contract-db: asks for it at start, keeps it (also
 * in the database, so a restart does not depend on the contract-db being up), asks again at half
 * its lifetime, and retries with backoff while the contract-db is unreachable or refuses. Spec:
 * specs/contract-db.md ("Approval credentials").
 */
import { STORES } from '../store/tables.js'
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import { DmsError } from '../../actors/errors.js'
import { delay, type Clock } from '../../actors/clock.js'
import { KeyPair } from '../../actors/identity.js'
import type { Actor, ActorSystem } from '../../actors/system.js'
import { Repo, type Db } from '../store/db.js'
import { checkApproval } from '../contracts/approval.js'
import { ContractDbClient } from './client.js'
import type { ApprovalCredential } from '../contracts/model.js'

/** This node has no valid approval credential (not approved, or the contract-db cannot be reached). */
export class NotApprovedError extends DmsError {
  constructor(message: string) {
    super('NOT_APPROVED', message)
  }
}

export interface ApprovalClientComponents {
  system: ActorSystem
  db: Db
  clock: Clock
  log: Logger
}

export interface ApprovalClientInit {
  /** The contract-db: peer id, and addresses to dial (empty: found through the peer store). */
  contractDb: { peer: string; addrs: string[] }
  /** Per-request timeout. @default 10000 */
  requestTimeoutMs?: number
  /** First retry delay after a failure; doubles up to `maxBackoffMs`. @default 1000 */
  backoffMs?: number
  /** @default 60000 */
  maxBackoffMs?: number
  /** How long `start` waits for the first answer when no valid credential is stored. @default 5000 */
  startWaitMs?: number
}

/** What `/v1/info` shows of the credential. */
export interface ApprovalStatus {
  contractDb: string
  approved: boolean
  expiresAt?: number
  /** The last failure to get one, while there is none (or it is being renewed). */
  lastError?: { code: string; message: string; at: number }
}

export class ApprovalClient {
  /** `renewed` (the credential) after each credential received, `failed` (the error) after each failure. */
  readonly events = new EventEmitter()
  private actor?: Actor
  private cred?: ApprovalCredential
  /** The credential whose signature was verified last (the same object, never a copy). */
  private verified?: ApprovalCredential
  private timer?: unknown
  private failures = 0
  private lastError?: { code: string; message: string; at: number }
  private inFlight?: Promise<void>
  private queued?: Promise<void>
  private abort = new AbortController()
  private readonly waiters = new Set<() => void>()
  private readonly repo: Repo<ApprovalCredential>

  constructor(
    private readonly c: ApprovalClientComponents,
    private readonly init: ApprovalClientInit,
  ) {
    this.repo = new Repo(c.db, STORES.approval.name)
  }

  get contractDb(): string {
    return this.init.contractDb.peer
  }

  /**
   * Loads a stored credential that is still valid, or else asks for one and waits for that first
   * answer up to `startWaitMs` (so a node that is approved has its credential when it is ready);
   * failures are retried in the background.
   */
  async start(): Promise<void> {
    if (this.actor !== undefined) return
    this.abort = new AbortController()
    this.actor = this.c.system.spawn(`approval/${this.contractDb}`, KeyPair.generate())
    const stored = await this.repo.get(this.contractDb).catch(() => undefined)
    if (stored !== undefined && this.valid(stored)) {
      this.cred = stored
      this.schedule(this.refreshDelay(stored))
      return
    }
    const waiting = new AbortController()
    const waited = delay(this.init.startWaitMs ?? 5000, { clock: this.c.clock, signal: waiting.signal })
    await Promise.race([this.refresh(), waited.catch(() => undefined)])
    waiting.abort()
  }

  stop(): void {
    this.abort.abort(new Error('stopping'))
    if (this.timer !== undefined) this.c.clock.clearTimeout(this.timer)
    this.timer = undefined
    this.actor?.stop()
    this.actor = undefined
  }

  /** The credential, while it is valid. */
  current(): ApprovalCredential | undefined {
    return this.cred !== undefined && this.valid(this.cred) ? this.cred : undefined
  }

  status(): ApprovalStatus {
    const cred = this.current()
    return {
      contractDb: this.contractDb,
      approved: cred !== undefined,
      ...(cred !== undefined ? { expiresAt: cred.expiresAt } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    }
  }

  /**
   * Asks the contract-db now (e.g. right after the operator approved this node). An ask already
   * on its way may have left before what prompted this one, so this one follows it (asks made
   * meanwhile share it).
   */
  refresh(): Promise<void> {
    if (this.actor === undefined) return Promise.resolve()
    if (this.inFlight === undefined) {
      this.inFlight = this.fetch().finally(() => (this.inFlight = undefined))
      return this.inFlight
    }
    this.queued ??= this.inFlight.then(() => {
      this.queued = undefined
      return this.refresh()
    })
    return this.queued
  }

  /**
   * Resolves with a valid credential, waiting up to `timeoutMs` for one; otherwise rejects with
   * NotApprovedError saying why (the contract-db's refusal, or that it could not be reached).
   */
  ready(timeoutMs: number, signal?: AbortSignal): Promise<ApprovalCredential> {
    const now = this.current()
    if (now !== undefined) return Promise.resolve(now)
    return new Promise((resolve, reject) => {
      const finish = () => {
        this.c.clock.clearTimeout(timer)
        this.waiters.delete(check)
        signal?.removeEventListener('abort', onAbort)
      }
      const check = () => {
        const cred = this.current()
        if (cred === undefined) return
        finish()
        resolve(cred)
      }
      const onAbort = () => {
        finish()
        reject(signal?.reason as Error)
      }
      const timer = this.c.clock.setTimeout(() => {
        finish()
        reject(this.notApproved())
      }, timeoutMs)
      this.waiters.add(check)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  /** Why there is no credential, for a person. */
  notApproved(): NotApprovedError {
    const why =
      this.lastError === undefined ? 'no answer yet' : `${this.lastError.code}: ${this.lastError.message}`
    return new NotApprovedError(
      `this node has no approval credential from contract-db ${this.contractDb} (${why}); its operator approves a peer with 'dms contract-db approve ${this.c.system.peerId}'`,
    )
  }

  /**
   * Whether `cred` names this node and its contract-db, is signed by it and has not expired. The
   * signature of the credential held is verified once (it is read on every bid and bid request);
   * the expiry is checked on every call.
   */
  private valid(cred: ApprovalCredential): boolean {
    const want = { peer: this.c.system.peerId, contractDb: this.contractDb, now: this.c.clock.now() }
    const signatureChecked = cred === this.verified
    const ok = checkApproval(cred, want, { signatureChecked }) === undefined
    if (ok) this.verified = cred
    return ok
  }

  /** Half the remaining lifetime: renewed well before it runs out, however the clocks differ. */
  private refreshDelay(cred: ApprovalCredential): number {
    return Math.max(1000, (cred.expiresAt - this.c.clock.now()) / 2)
  }

  private schedule(ms: number): void {
    if (this.timer !== undefined) this.c.clock.clearTimeout(this.timer)
    this.timer = this.c.clock.setTimeout(() => {
      this.timer = undefined
      void this.refresh()
    }, ms)
  }

  private async fetch(): Promise<void> {
    const actor = this.actor
    if (actor === undefined) return
    const peer = this.contractDb
    const client = new ContractDbClient(
      { actor, clock: this.c.clock },
      { contractDb: this.init.contractDb, timeoutMs: this.init.requestTimeoutMs },
    )
    try {
      // Checked on arrival: for this node, from this contract-db, valid now (else BAD_APPROVAL).
      const cred = await client.approval(this.c.system.peerId, { signal: this.abort.signal })
      this.cred = cred
      this.failures = 0
      this.lastError = undefined
      await this.repo.put(peer, cred).catch((err: unknown) => this.c.log.warn({ err }, 'approval not stored'))
      this.c.log.info({ contractDb: peer, expiresAt: cred.expiresAt }, 'approval credential renewed')
      for (const w of [...this.waiters]) w()
      this.schedule(this.refreshDelay(cred))
      this.events.emit('renewed', cred)
    } catch (err) {
      if (this.abort.signal.aborted) return
      const e = err as { code?: unknown; message?: unknown }
      this.lastError = {
        code: typeof e.code === 'string' ? e.code : 'ERROR',
        message: String(e.message ?? err),
        at: this.c.clock.now(),
      }
      const wait = Math.min(
        this.init.maxBackoffMs ?? 60_000,
        (this.init.backoffMs ?? 1000) * 2 ** this.failures,
      )
      this.failures++
      this.c.log.warn(
        { contractDb: peer, code: this.lastError.code, err: this.lastError.message, retryInMs: wait },
        'no approval credential from the contract-db',
      )
      this.schedule(wait)
      this.events.emit('failed', this.lastError)
    }
  }
}
