/**
 * The contract-db verifier service: the network face (inbox `contract-db`) and the operator's
 * operations, over approvals, accounts and contracts. Spec: specs/contract-db.md.
 *
 * Every operation that reads and then writes runs through one queue (`serial`), whether it came
 * over the network or from the operator, so a check and the atomic batch that follows it never
 * interleave with another operation. Each protocol message has its handler (handlers/); each
 * contract's transitions are driven by the contract machine (contract-book.ts), which writes a
 * contract's record and the money it moves in one batch.
 */
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import { codeOf } from '../../actors/errors.js'
import type { Clock } from '../../actors/clock.js'
import type { KeyPair } from '../../actors/identity.js'
import { SerialQueue } from '../../actors/serial.js'
import type { Actor, ActorSystem } from '../../actors/system.js'
import { signDoc } from '../contracts/canonical.js'
import {
  DOMAIN,
  type ApprovalCredential,
  type ContractProof,
  type FundsProof,
  type Role,
  type Settlement,
  type SignedContract,
  type SignedStartNote,
  type StartAck,
} from '../contracts/model.js'
import type { Amount } from '../contracts/money.js'
import { W } from '../protocol/behaviours.js'
import { handleOf, INBOX, jobInbox } from '../protocol/handles.js'
import type { SettleRequest, TerminateRequest } from '../protocol/messages.js'
import type { Db } from '../store/db.js'
import { Approvals } from './approvals.js'
import { staleChange, type Change } from './changes.js'
import type { CdbRequest, ContractDbEvents } from './events.js'
import { ContractBook } from './contract-book.js'
import { approvalHandler, type ApprovalHandler } from './handlers/approval.js'
import { fundsHandler, type FundsHandler } from './handlers/funds.js'
import type { ClosableContracts } from './handlers/closable.js'
import {
  rejectionHandler,
  settleHandler,
  type RejectionHandler,
  type SettleHandler,
} from './handlers/settle.js'
import { NO_ARBITER, type RejectionArbiter } from './arbiter.js'
import { startHandler, type StartHandler } from './handlers/start.js'
import { terminateHandler, type TerminateHandler } from './handlers/terminate.js'
import { verifyHandler, type VerifyHandler } from './handlers/verify.js'
import { afterLockFault } from './fault-kill.js'
import { DEADLINES, deadlinesOf, type DeadlineConfig } from './deadlines.js'
import { LevelContractDbStore } from './store/level.js'
import type { ContractPageOf, ContractPageQuery } from './store/page.js'
import type { ContractDbStore, StoreBackend } from './store/port.js'
import { Accounts } from './ledger.js'
import { conservationOf, CreditedBook, type Conservation } from './conservation.js'
import { type Account, type ApprovedEntity, type ContractRecord, type StoredState } from './records.js'

export interface ContractDbInit {
  /** Lifetime of the approval credentials it issues. @default APPROVAL_TTL_MS (10 minutes) */
  approvalTtlMs?: number
  /** Lifetime of the funds proofs it issues. @default FUNDS_TTL_MS (one minute) */
  fundsTtlMs?: number
  /** The most volunteer contracts (escrow 0) one requester may have active. @default 16 */
  maxActiveVolunteerContracts?: number
  /** settleBy's grace, the claim and dispute windows (deadlines.ts). @default DEADLINES */
  deadlines?: Partial<DeadlineConfig>
  /** How often active contracts past their expiry are expired. @default 60000 */
  expirySweepMs?: number
}

export const MAX_ACTIVE_VOLUNTEER_CONTRACTS = 16

/** What a write changed (the operator's page reloads on each). */
export type BooksChange = 'contract' | 'account' | 'approval'

export interface ContractDbComponents {
  system: ActorSystem
  key: KeyPair
  /** The node's level database: the books live there unless `store` is given. */
  db: Db
  /** Where the books live (store/port.ts). @default the level backend over `db` */
  store?: ContractDbStore
  /** Time of every record, and the contract actors' timers. */
  clock: Clock
  log: Logger
  /**
   * Checks rejected results (arbiter.ts), made from the service's actor once it starts.
   * @default NO_ARBITER (a rejection stands unchecked: tests of other parts only)
   */
  arbiter?: (actor: Actor) => RejectionArbiter
  /** The chaos run's fault point (fault-kill.ts; dms/test-hooks.ts). @default none */
  killAfterLock?: string
}

export class ContractDbService {
  /** Writes and refusals as they happen (events.ts): the metrics count them. */
  readonly events = new EventEmitter<ContractDbEvents>()
  private actor?: Actor
  private readonly queue = new SerialQueue()
  private readonly approvals: Approvals
  private readonly accounts: Accounts
  private readonly creditedBook: CreditedBook
  private readonly listeners = new Set<(what: BooksChange) => void>()
  private readonly store: ContractDbStore
  private readonly book: ContractBook
  private readonly deadlines: DeadlineConfig
  private readonly sweepMs: number
  private sweepTimer?: unknown
  private arbiter: RejectionArbiter = NO_ARBITER
  /** Aborted at stop: checks of rejections in progress end. */
  private running = new AbortController()
  private readonly handlers: {
    verify: VerifyHandler
    settle: SettleHandler
    rejection: RejectionHandler
    terminate: TerminateHandler
    start: StartHandler
    approval: ApprovalHandler
    funds: FundsHandler
  }

  constructor(
    private readonly components: ContractDbComponents,
    init: ContractDbInit = {},
  ) {
    const { db, key, clock, log, system } = components
    this.deadlines = { ...DEADLINES, ...init.deadlines }
    this.sweepMs = init.expirySweepMs ?? 60_000
    const store = (this.store = components.store ?? new LevelContractDbStore(db))
    this.approvals = new Approvals(
      {
        get: (peer) => store.approval(peer),
        put: (_, e) => store.transaction((tx) => tx.putApproval(e)),
        del: (peer) => store.transaction((tx) => tx.delApproval(peer)),
        values: () => store.approvals(),
      },
      { clock, log },
    )
    this.accounts = new Accounts(store, log)
    this.creditedBook = new CreditedBook(() => clock.now())
    this.book = new ContractBook({
      clock,
      effects: {
        commit: (change) => this.commit(change),
        notify: (closed) => this.notify(closed),
        signSettlement: (body) => signDoc(key, DOMAIN.settlement, body),
      },
    })
    const contracts: ClosableContracts = {
      get: (id) => this.store.contract(id),
      accepts: (rec, type) => this.book.accepts(rec, type),
      close: (rec, facts) => this.book.close(rec, facts),
    }
    const self = system.peerId
    const afterLock = afterLockFault(components.killAfterLock)
    this.handlers = {
      verify: verifyHandler({
        self,
        clock,
        signProof: (body) => signDoc(key, DOMAIN.proof, body),
        approvals: this.approvals,
        accounts: this.accounts,
        contracts: {
          get: (id) => this.store.contract(id),
          // Fault injection for the chaos run (fault-kill.ts): unset, nothing.
          propose: (input) =>
            this.book.propose(input).then((rec) => {
              if (rec.state === 'active') afterLock()
              return rec
            }),
          activeVolunteers: (peer) => this.store.activeVolunteers(peer),
        },
        maxActiveVolunteers: init.maxActiveVolunteerContracts ?? MAX_ACTIVE_VOLUNTEER_CONTRACTS,
        deadlines: this.deadlines,
        log,
      }),
      settle: settleHandler({ contracts, log, clock, deadlines: this.deadlines }),
      rejection: rejectionHandler({ contracts, log, clock, deadlines: this.deadlines }),
      terminate: terminateHandler({ contracts, log, clock, deadlines: this.deadlines }),
      start: startHandler({ contracts, log, clock, self }),
      approval: approvalHandler({ self, key, clock, approvals: this.approvals, ttlMs: init.approvalTtlMs }),
      funds: fundsHandler({
        self,
        key,
        clock,
        approvals: this.approvals,
        accounts: this.accounts,
        ttlMs: init.fundsTtlMs,
      }),
    }
  }

  get peerId(): string {
    return this.components.system.peerId
  }

  /** Where the books are: `level` or `postgres`. */
  get backend(): StoreBackend {
    return this.store.backend
  }

  start(): void {
    if (this.actor !== undefined) return
    this.actor = this.components.system
      .spawn(INBOX.contractDb, this.components.key)
      .on(W.contractVerify, (m) => this.answer('verify', this.verify(m.peer, m.payload.contract)))
      .on(W.settle, (m) => this.answer('settle', this.settle(m.peer, m.payload)))
      .on(W.terminate, (m) => this.answer('terminate', this.terminate(m.peer, m.payload)))
      .on(W.contractStarted, (m) => this.answer('start', this.started(m.peer, m.payload.note)))
      .on(W.approval, (m) => this.answer('approval', this.approvalFor(m.peer)))
      .on(W.funds, (m) => this.answer('funds', this.fundsFor(m.peer)))
      // A peer's own account, read only (a requester checks a workflow's escrow plan against it).
      .on(W.balance, async (m) => {
        const { balance, escrow } = await this.account(m.peer)
        return { balance, escrow }
      })
    this.running = new AbortController()
    this.arbiter = this.components.arbiter?.(this.actor) ?? NO_ARBITER
    this.scheduleSweep()
  }

  stop(): void {
    this.running.abort()
    this.actor?.stop()
    this.actor = undefined
    if (this.sweepTimer !== undefined) this.components.clock.clearTimeout(this.sweepTimer)
    this.sweepTimer = undefined
  }

  /**
   * Expires every active contract past `settleBy` + the claim window (nobody settled, terminated
   * or claimed it), or past its `startBy` with no start note: the whole escrow returns to its
   * requester, and both parties are told. Resolves with the expired records. Runs every
   * `expirySweepMs` while started.
   */
  expireDue(): Promise<ContractRecord[]> {
    return this.serial(async () => {
      const now = this.components.clock.now()
      const expired: ContractRecord[] = []
      for (const rec of await this.store.dueBy(now)) {
        const due = deadlinesOf(rec, this.deadlines)
        if (due.expiresAt > now) continue
        const notStarted = due.notStartedBy !== undefined && due.notStartedBy < now
        const detail = notStarted ? 'not started by startBy' : undefined
        try {
          expired.push(await this.book.close(rec, { type: 'EXPIRE', by: this.peerId, detail }))
        } catch (err) {
          // Closed meanwhile by another instance over the same store: nothing left to expire.
          const level = codeOf(err) === 'CONTRACT_NOT_ACTIVE' ? 'debug' : 'warn'
          this.components.log[level](
            { err, contractId: rec.contract.terms.contractId },
            'contract not expired',
          )
        }
      }
      if (expired.length > 0)
        this.components.log.info({ count: expired.length }, 'contracts expired, escrow refunded')
      return expired
    })
  }

  private scheduleSweep(): void {
    this.sweepTimer = this.components.clock.setTimeout(() => {
      if (this.actor === undefined) return
      void this.expireDue()
        .catch((err: unknown) => this.components.log.warn({ err }, 'expiry sweep failed'))
        .then(() => this.arbiter.sweep?.(this.components.clock.now()))
        .catch((err: unknown) => this.components.log.warn({ err }, 'handed-on archives not dropped'))
        .finally(() => {
          if (this.actor !== undefined) this.scheduleSweep()
        })
    }, this.sweepMs)
  }

  /** A peer's request as answered: a refusal is told with its code (events.ts), then thrown on. */
  private answer<T>(request: CdbRequest, answer: Promise<T>): Promise<T> {
    return answer.catch((err: unknown) => {
      this.tell('refused', request, codeOf(err))
      throw err
    })
  }

  /** Emits an event; a listener that throws is logged, never a failure of the write it follows. */
  private tell<K extends keyof ContractDbEvents>(event: K, ...args: ContractDbEvents[K]): void {
    try {
      ;(this.events.emit as (e: K, ...a: ContractDbEvents[K]) => boolean)(event, ...args)
    } catch (err) {
      this.components.log.warn({ err, event }, 'event listener failed')
    }
  }

  /** Runs `fn` after every operation queued before it (one at a time). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.run(fn)
  }

  // ---- the protocol: verify, settle, terminate, approval ----

  /** Verifies a two-party contract, locks its escrow and returns the signed proof. */
  verify(submitter: string, contract: SignedContract | undefined): Promise<ContractProof> {
    return this.serial(() => this.handlers.verify(submitter, contract))
  }

  /**
   * Settles an active contract from the provider's receipt and the requester's verification. A
   * rejection is checked first (the outputs fetched from the provider, arbiter.ts), outside the
   * queue so that other contracts go on meanwhile, then settled on that check.
   */
  async settle(submitter: string, req: SettleRequest | undefined): Promise<Settlement> {
    const rejected =
      req?.verification?.verification?.verified === false
        ? await this.serial(() => this.handlers.rejection(submitter, req))
        : undefined
    const arbitration =
      rejected === undefined
        ? undefined
        : await this.arbiter.check(rejected.terms, rejected.receipt, { signal: this.running.signal })
    return this.serial(() => this.handlers.settle(submitter, req, arbitration))
  }

  /** Closes an active contract with a reason code (see TERMINATION). */
  terminate(submitter: string, req: TerminateRequest | undefined): Promise<Settlement> {
    return this.serial(() => this.handlers.terminate(submitter, req))
  }

  /** Records the provider's start note of an active contract (idempotent); refused past startBy. */
  started(submitter: string, note: SignedStartNote | undefined): Promise<StartAck> {
    return this.serial(() => this.handlers.start(submitter, note))
  }

  /** A short-lived signed approval credential for an approved peer (reads only: not queued). */
  approvalFor(peer: string): Promise<ApprovalCredential> {
    return this.handlers.approval(peer)
  }

  /** A short-lived signed proof of an approved peer's spendable balance (reads only: not queued). */
  fundsFor(peer: string): Promise<FundsProof> {
    return this.handlers.funds(peer)
  }

  // ---- the operator: approvals, accounts, contracts ----

  /** Approves `peer` (`roles`: BAD_ROLE for an unknown one; none: requester and provider). */
  approve(peer: string, roles?: readonly string[]): Promise<ApprovedEntity> {
    return this.serial(async () => {
      const e = await this.approvals.approve(peer, roles)
      this.changed('approval')
      return e
    })
  }

  /** Removes an approval. New contracts naming the peer are refused; active ones still close. */
  revoke(peer: string): Promise<boolean> {
    return this.serial(async () => {
      const revoked = await this.approvals.revoke(peer)
      if (revoked) this.changed('approval')
      return revoked
    })
  }

  isApproved(peer: string): Promise<boolean> {
    return this.approvals.isApproved(peer)
  }

  /** The roles of an approved peer; undefined when it is not approved. */
  rolesOf(peer: string): Promise<readonly Role[] | undefined> {
    return this.approvals.rolesOf(peer)
  }

  listApproved(): Promise<ApprovedEntity[]> {
    return this.approvals.list()
  }

  /**
   * Adds test tokens to a peer's balance (operator only: there is no network route for it), and
   * to the credited total, in one batch.
   */
  credit(peer: string, amount: Amount): Promise<Account> {
    return this.serial(async () => {
      const account = await this.store.transaction(async (tx) => {
        const acc = await this.accounts.credit(tx, peer, amount)
        const { total } = await this.creditedBook.current(tx, () => this.accounts.list())
        this.creditedBook.put(tx, CreditedBook.plus(total, amount))
        return acc
      })
      this.accounts.credited(peer, amount)
      this.tell('credit', peer, amount)
      this.changed('account')
      return account
    })
  }

  /**
   * Opens the books: a database without a credited total (new, or from before it) gets one from
   * what its accounts hold (conservation.ts); the store builds an index an older one lacks. Run
   * once at start, before the service serves.
   */
  openBooks(): Promise<void> {
    return this.serial(async () => {
      await this.store.open()
      const fresh = await this.store.transaction(async (tx) => {
        const { total, fresh } = await this.creditedBook.current(tx, () => this.accounts.list())
        if (fresh) this.creditedBook.put(tx, total)
        return fresh ? total : undefined
      })
      if (fresh === undefined) return
      this.components.log.info({ credited: fresh.credited }, 'credited total initialised from the accounts')
    })
  }

  /**
   * The conservation check: credited == balances + escrow, read in one snapshot of the books
   * (`store.books()`), so a write by another instance cannot fall between the two reads.
   */
  conservation(): Promise<Conservation> {
    return this.serial(async () => conservationOf(...this.creditedBook.of(await this.store.books())))
  }

  /** Tells `fn` of each write (a contract, an account, an approval); returns the unsubscribe. */
  onChange(fn: (what: BooksChange) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  private changed(what: BooksChange): void {
    for (const fn of this.listeners) {
      try {
        fn(what)
      } catch (err) {
        this.components.log.warn({ err }, 'change listener failed')
      }
    }
  }

  account(peer: string): Promise<Account> {
    return this.accounts.get(peer)
  }

  listAccounts(): Promise<Account[]> {
    return this.accounts.list()
  }

  contract(id: string): Promise<ContractRecord | undefined> {
    return this.store.contract(id)
  }

  /** Every stored contract: reads every row (the metrics' scan at start). */
  listContracts(): Promise<ContractRecord[]> {
    return this.store.contracts()
  }

  /** One page of the contracts, newest first (store/page.ts). */
  contractPage(q: ContractPageQuery): Promise<ContractPageOf<ContractRecord>> {
    return this.store.page(q)
  }

  contractCounts(): Promise<Partial<Record<StoredState, number>>> {
    return this.store.countByState()
  }

  // ---- the contract machine's effects ----

  /**
   * A contract's record and the money it moves, in one transaction, unless the record changed
   * since the change was planned (another instance wrote it): refused then, nothing written.
   */
  private async commit(change: Change): Promise<void> {
    await this.store.transaction(async (tx) => {
      const stale = staleChange(await tx.contract(change.record.contract.terms.contractId), change)
      if (stale !== undefined) throw stale
      await this.accounts.apply(tx, change.moves)
      tx.putContract(change.record)
    })
    this.tell('contract', change)
    this.changed('contract')
  }

  /** Best effort: the party that did not close the contract also gets the signed settlement. */
  private notify(closed: ContractRecord): void {
    try {
      const t = closed.contract.terms
      const by = closed.closedBy
      const requester = handleOf(t.requester.peer, jobInbox(t.jobId))
      const provider = handleOf(t.provider.peer, INBOX.provider)
      // Closed by a party: the other one; expired by the contract-db: both.
      const others =
        by === t.provider.peer ? [requester] : by === t.requester.peer ? [provider] : [requester, provider]
      for (const other of others) {
        if (other.peer === by || closed.settlement === undefined) continue
        void this.actor?.send(other, W.settled, closed.settlement).catch(() => {})
      }
    } catch (err) {
      this.components.log.warn({ err }, 'settlement notice not sent')
    }
  }
}
