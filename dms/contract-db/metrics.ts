/**
 * The contract-db's metrics (prom-client, text format 0.0.4): contracts by state, settlements,
 * escrow locked and money paid out, refusals by code, the receive pipeline's rejections, and the
 * books' conservation check; then the process's runtime metrics. Names and labels:
 * specs/contract-db.md, "Metrics".
 *
 * Counted at the service's events (events.ts); the stored contracts are read once, at start. The
 * books' sums (credited, balances, escrow, accounts) come from the conservation check, which
 * reads every account: it runs at a scrape at most once per `conservationMaxAgeMs`, whatever the
 * number of scrapes, and scrapes in between read its last result.
 */
import { Counter, Gauge, Registry } from 'prom-client'
import type { Clock } from '../../actors/clock.js'
import type { ReceiveEvent } from '../../actors/system.js'
import { readGauge, seed, type Counts } from '../metrics/counts.js'
import { renderWithRuntime } from '../metrics/runtime.js'
import { StateTally } from '../metrics/state-tally.js'
import type { Change } from './changes.js'
import type { Conservation } from './conservation.js'
import type { CdbRequest, ContractDbEventsView } from './events.js'
import type { StoredState } from './records.js'
import type { StoreBackend } from './store/port.js'

/** The states a stored contract never leaves (a dispute keeps a claim `claimed`). */
const FINAL: ReadonlySet<string> = new Set<StoredState>(['settled', 'terminated', 'claimed', 'expired'])
/** Refusal codes are ours (UPPER_SNAKE); anything else, or past this many, counts as `other`. */
const CODE = /^[A-Z][A-Z0-9_]{0,63}$/
const MAX_CODES = 64

/** What the contract-db's metrics read: small ports over its parts, never the node. */
export interface ContractDbSources {
  clock: Clock
  backend: StoreBackend
  /** This instance's name (the config's `instance`). */
  instance: string
  /** The service's writes and refusals. */
  events: ContractDbEventsView
  /** The actor system's receive counts so far, and its later events. */
  receive: {
    rejections: Counts
    late: Counts
    observe(fn: (e: ReceiveEvent) => void): () => void
  }
  /** Distinct peers with an open connection. */
  connectedPeers(): number
  /** Every stored contract's id and state (read once, at start). */
  contractStates(): Promise<Array<{ id: string; state: string }>>
  /** The conservation check: reads every account. */
  conservation(): Promise<Conservation>
}

export interface ContractDbMetricsInit {
  /** A scrape reuses the last conservation check younger than this. @default 15000 */
  conservationMaxAgeMs?: number
}

export class ContractDbMetrics {
  readonly registry = new Registry()
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE
  private readonly tally: StateTally
  private readonly settlements: Counter<'outcome'>
  private readonly paid: Counter<'to'>
  private readonly locked: Counter
  private readonly credits: Counter
  private readonly refusals: Counter<'request' | 'code'>
  private readonly codes = new Set<string>()
  private readonly books: BooksCheck
  private readonly offs: Array<() => void> = []

  constructor(
    private readonly sources: ContractDbSources,
    init: ContractDbMetricsInit = {},
  ) {
    const registers = [this.registry]
    this.books = new BooksCheck(sources, init.conservationMaxAgeMs ?? 15_000)
    new Gauge({
      name: 'dms_contract_db_info',
      help: "the contract-db's storage backend (level, postgres) and this instance's name: always 1",
      // Not `instance`: Prometheus sets that label on every scraped series to the target's
      // host:port, and renames a scraped `instance` to `exported_instance`.
      labelNames: ['backend', 'cdb_instance'],
      registers,
    }).set({ backend: sources.backend, cdb_instance: sources.instance }, 1)
    const contracts = new Gauge({
      name: 'dms_contract_db_contracts',
      help: 'stored contracts by state (active, settled, terminated, claimed, expired)',
      labelNames: ['state'],
      registers,
    })
    this.tally = new StateTally(
      contracts,
      (s) => FINAL.has(s),
      () => undefined,
    )
    this.settlements = new Counter({
      name: 'dms_contract_db_settlements_total',
      help: 'contracts closed since start, by outcome: settled, terminated, claimed, expired',
      labelNames: ['outcome'],
      registers,
    })
    this.paid = new Counter({
      name: 'dms_contract_db_paid_microtokens_total',
      help: 'escrow paid out at the closes since start (micro-tokens), to the provider or back to the requester',
      labelNames: ['to'],
      registers,
    })
    this.locked = new Counter({
      name: 'dms_contract_db_escrow_locked_microtokens_total',
      help: 'escrow locked by the contracts verified since start (micro-tokens)',
      registers,
    })
    this.credits = new Counter({
      name: 'dms_contract_db_credits_microtokens_total',
      help: "operators' credits since start (micro-tokens)",
      registers,
    })
    this.refusals = new Counter({
      name: 'dms_contract_db_refusals_total',
      help: "peers' requests refused since start, by request (verify, settle, terminate, start, approval, funds) and code (specs/contract-db.md)",
      labelNames: ['request', 'code'],
      registers,
    })
    const rejections = new Counter({
      name: 'dms_actor_rejections_total',
      help: 'inbound frames refused by the receive pipeline, by reason (specs/protocol.md)',
      labelNames: ['reason'],
      registers,
    })
    const late = new Counter({
      name: 'dms_actor_late_total',
      help: 'valid messages that arrived after their inbox closed or their request timed out',
      labelNames: ['reason'],
      registers,
    })
    readGauge(this.registry, 'dms_peers_connected', 'libp2p peers with an open connection', () =>
      sources.connectedPeers(),
    )
    this.booksGauges(registers)
    // Seeded and subscribed in one turn: nothing counted in between is lost or counted twice.
    seed(rejections, 'reason', sources.receive.rejections)
    seed(late, 'reason', sources.receive.late)
    this.offs.push(
      sources.receive.observe((e) =>
        e.kind === 'rejected' ? rejections.inc({ reason: e.reason }) : late.inc({ reason: e.reason }),
      ),
    )
    const onContract = (c: Change) => this.contract(c)
    const onCredit = (_peer: string, amount: number) => this.credits.inc(amount)
    const onRefused = (request: CdbRequest, code: string) => this.refused(request, code)
    sources.events.on('contract', onContract)
    sources.events.on('credit', onCredit)
    sources.events.on('refused', onRefused)
    this.offs.push(() => {
      sources.events.off('contract', onContract)
      sources.events.off('credit', onCredit)
      sources.events.off('refused', onRefused)
    })
  }

  /** Reads the stored contracts once (at start); writes meanwhile are counted once. */
  scan(): Promise<void> {
    return this.tally.scan(async (seed) => {
      for (const c of await this.sources.contractStates()) seed(c.id, c.state)
    })
  }

  /** Unsubscribes from the service and the actor system. */
  stop(): void {
    for (const off of this.offs.splice(0)) off()
  }

  /** The contract-db's families, then the process's runtime ones. */
  render(): Promise<string> {
    return renderWithRuntime(this.registry)
  }

  private contract(c: Change): void {
    const t = c.record.contract.terms
    const moved = this.tally.observe(t.contractId, c.to)
    if (moved === undefined) return
    if (moved.from === undefined && moved.to === 'active') this.locked.inc(t.escrow)
    if (moved.from !== 'active' || !FINAL.has(moved.to)) return
    this.settlements.inc({ outcome: moved.to })
    const s = c.record.settlement
    if (s === undefined) return
    this.paid.inc({ to: 'provider' }, s.paidToProvider)
    this.paid.inc({ to: 'requester' }, s.refundedToRequester)
  }

  private refused(request: CdbRequest, code: string): void {
    // A code is ours, never a peer's text; the set is bounded all the same.
    const known = CODE.test(code) && (this.codes.has(code) || this.codes.size < MAX_CODES)
    if (known) this.codes.add(code)
    this.refusals.inc({ request, code: known ? code : 'other' })
  }

  private booksGauges(registers: Registry[]): void {
    const books = this.books
    const sum = (name: string, help: string, read: (c: Conservation, at: number) => number) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          const { value, at } = await books.current()
          this.set(read(value, at))
        },
      })
    sum(
      'dms_contract_db_credited_microtokens',
      "the credited total: everything operators' credits put into the books (micro-tokens)",
      (c) => c.credited,
    )
    sum('dms_contract_db_balances_microtokens', "the accounts' spendable balances, summed", (c) => c.balances)
    sum(
      'dms_contract_db_escrow_microtokens',
      'escrow held: locked in active contracts, summed over the accounts (micro-tokens)',
      (c) => c.escrow,
    )
    sum('dms_contract_db_accounts', 'accounts that ever held money', (c) => c.accounts)
    sum(
      'dms_contract_db_conservation_difference_microtokens',
      'balances + escrow - credited: 0 when the books add up (specs/contract-db.md, "Conservation")',
      (c) => c.difference,
    )
    sum(
      'dms_contract_db_conservation_ok',
      '1 when balances + escrow equal the credited total, else 0',
      (c) => (c.ok ? 1 : 0),
    )
    sum(
      'dms_contract_db_conservation_checked_timestamp_seconds',
      'when the books above were read (unix seconds)',
      (_, at) => at / 1000,
    )
  }
}

interface Checked {
  at: number
  value: Conservation
}

/** The conservation check, run at most once per `maxAgeMs`; concurrent scrapes share one run. */
class BooksCheck {
  private last?: Checked
  private running?: Promise<Checked>

  constructor(
    private readonly sources: Pick<ContractDbSources, 'clock' | 'conservation'>,
    private readonly maxAgeMs: number,
  ) {}

  /** The last check, or a new one when it is `maxAgeMs` old (`at`: when it read, clock ms). */
  current(): Promise<Checked> {
    const now = this.sources.clock.now()
    if (this.last !== undefined && now - this.last.at < this.maxAgeMs) return Promise.resolve(this.last)
    this.running ??= this.sources
      .conservation()
      .then((value) => (this.last = { at: now, value }))
      .finally(() => {
        this.running = undefined
      })
    return this.running
  }
}
