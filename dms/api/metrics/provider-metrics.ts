/**
 * The provider's metrics: its ledger's sums (kept in memory by the ledger), declines and ignored
 * bid requests as they happen, and allocations by state at each stored change. Names and labels:
 * specs/rest-api.md, "Metrics".
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import { mirroredCounter, seed, type Counts } from '../../metrics/counts.js'
import { StateTally } from '../../metrics/state-tally.js'

const KINDS = ['offer', 'reserved', 'locked', 'allocated', 'free'] as const
const DIMS = ['cpu', 'memoryBytes', 'diskBytes', 'gpus'] as const

/** The ledger's sums: what is offered, reserved, locked, allocated and free, by resource. */
export type ResourceSums = Record<(typeof KINDS)[number], Record<(typeof DIMS)[number], number>>

export interface ProviderSources {
  /** The ledger's sums now (kept in memory by the ledger). */
  resources(): ResourceSums
  /** Bid requests declined, by kind (counted by the provider as it declines). */
  declines(): Counts
  /** The allocation states an allocation never leaves. */
  finalStates: readonly string[]
  /** The provider's books: paid, claimed, refunded and outstanding micro-tokens. */
  books?: () => Promise<Record<(typeof BOOK_KINDS)[number], number>>
  /** The provider's lifecycle mode now (ready, paused, draining, drained); absent: not shown. */
  mode?: () => string
}

const BOOK_KINDS = ['paid', 'claimed', 'refunded', 'outstanding'] as const
const MODES = ['ready', 'paused', 'draining', 'drained']

export class ProviderMetrics {
  private readonly tally: StateTally
  private readonly ignored: Counter<'reason'>

  constructor(registry: Registry, sources: ProviderSources) {
    const registers = [registry]
    new Gauge({
      name: 'dms_provider_resources',
      help: 'provider ledger: offered, reserved, locked, allocated and free resources (cpu in cores, sizes in bytes)',
      labelNames: ['kind', 'resource'],
      registers,
      collect() {
        const s = sources.resources()
        for (const kind of KINDS) for (const resource of DIMS) this.set({ kind, resource }, s[kind][resource])
      },
    })
    const books = sources.books
    if (books !== undefined)
      new Gauge({
        name: 'dms_provider_earnings',
        help: "provider books (micro-tokens): paid on settlements, paid on its claims, refunded to requesters out of its contracts' escrow, and still outstanding",
        labelNames: ['kind'],
        registers,
        async collect() {
          const b = await books()
          for (const kind of BOOK_KINDS) this.set({ kind }, b[kind])
        },
      })
    const mode = sources.mode
    if (mode !== undefined)
      new Gauge({
        name: 'dms_provider_mode',
        help: "the provider's lifecycle mode: 1 for the current one (ready, paused, draining, drained)",
        labelNames: ['mode'],
        registers,
        collect() {
          const now = mode()
          for (const m of MODES) this.set({ mode: m }, m === now ? 1 : 0)
        },
      })
    mirroredCounter(
      registry,
      'dms_provider_declines_total',
      'bid requests declined, by reason',
      'reason',
      () => sources.declines(),
    )
    this.ignored = new Counter({
      name: 'dms_provider_bid_requests_ignored_total',
      help: 'bid requests dropped without an answer, by reason: rate_limited, no or bad approval credential of the requester, not_approved_here, malformed, past_deadline',
      labelNames: ['reason'],
      registers,
    })
    const allocations = new Gauge({
      name: 'dms_allocations',
      help: 'provider allocations by state',
      labelNames: ['state'],
      registers,
    })
    const final = new Set(sources.finalStates)
    this.tally = new StateTally(
      allocations,
      (s) => final.has(s),
      () => undefined,
    )
  }

  /** Bid requests dropped before these metrics listened. */
  seed(bidRequestsIgnored: Counts): void {
    seed(this.ignored, 'reason', bidRequestsIgnored)
  }

  /** A bid request dropped without an answer. */
  bidRequestIgnored(reason: string): void {
    this.ignored.inc({ reason })
  }

  /** An allocation as stored now (undefined: deleted). */
  allocation(id: string, state: string | undefined): void {
    this.tally.observe(id, state)
  }

  /** Reads the stored allocations once, at start. */
  scan(list: () => Promise<Array<{ id: string; state: string }>>): Promise<void> {
    return this.tally.scan(async (seed) => {
      for (const a of await list()) seed(a.id, a.state)
    })
  }
}
