/**
 * Who a bid window waits for, and for how long. Pure logic over a clock reading (no timers, no
 * network), so the rules are tested on a simulated clock. Spec: specs/protocol.md, "Bid window".
 *
 * A window may close early when every provider in its *audience* has answered. The audience is
 * the live subscribers of the bid-request topic, minus the job's exclusions, minus the peers
 * that left the last `silentAfter` bid requests in a row unanswered. Such a silent peer is still
 * asked (the request is a broadcast) and its answer still counts; it is only no longer waited
 * for, until it answers again. And even a peer not yet known to be silent holds a window at most
 * `stragglerMs` after the first answer came in.
 */
import type { Clock } from '../../actors/clock.js'
import type { PeerIdStr } from '../../actors/transport.js'

/** Why a window closed. */
export type CloseReason = 'enough_bids' | 'all_answered' | 'stragglers' | 'deadline'

export interface BidAudienceInit {
  /** Bid requests in a row a peer may leave unanswered before it is no longer waited for. @default 3 */
  silentAfter?: number
  /** Longest a window stays open after its first answer, for the peers yet to answer. @default 500 */
  stragglerMs?: number
  /** Peers whose silence is remembered (the oldest entry is forgotten first). @default 10000 */
  maxTracked?: number
}

/** What one window was and how it ended (for logs, metrics and tests). */
export interface WindowSummary {
  /** The job the request was for, when given to `open`. */
  jobId?: string
  reason: CloseReason
  /** Peers the request was meant for (live subscribers minus exclusions). */
  asked: number
  /** Of those, the peers waited for (not known to be silent). */
  audience: number
  /** Peers that answered (bid or decline), asked or not. */
  answered: number
  /** Asked peers that did not answer and now count as silent (left out of the next audiences). */
  silent: PeerIdStr[]
  openedAt: number
  closedAt: number
}

/** The silence record shared by all of a requester's windows. */
export class BidAudience {
  private readonly silentAfter: number
  readonly stragglerMs: number
  private readonly maxTracked: number
  /** peer -> bid requests in a row it left unanswered. Insertion order = least recently updated first. */
  private readonly misses = new Map<PeerIdStr, number>()
  private readonly observers = new Set<(s: WindowSummary) => void>()

  constructor(init: BidAudienceInit = {}) {
    this.silentAfter = init.silentAfter ?? 3
    this.stragglerMs = init.stragglerMs ?? 500
    this.maxTracked = init.maxTracked ?? 10_000
  }

  /** True once `peer` has left the last `silentAfter` requests unanswered. */
  isSilent(peer: PeerIdStr): boolean {
    return (this.misses.get(peer) ?? 0) >= this.silentAfter
  }

  /** Peers currently left out of audiences. */
  silentPeers(): PeerIdStr[] {
    return [...this.misses].filter(([, n]) => n >= this.silentAfter).map(([p]) => p)
  }

  /** Opens a window for one published bid request. */
  open(o: {
    jobId?: string
    subscribers: Iterable<PeerIdStr>
    exclude?: Iterable<PeerIdStr>
    openedAt: number
    deadline: number
    enoughBids: number
  }): BidWindow {
    const excluded = new Set(o.exclude ?? [])
    const asked = new Set([...o.subscribers].filter((p) => !excluded.has(p)))
    const audience = new Set([...asked].filter((p) => !this.isSilent(p)))
    return new BidWindow(this, asked, audience, o, o.enoughBids)
  }

  /** Calls `fn` with every closed window's summary; returns the unsubscribe function. */
  observe(fn: (s: WindowSummary) => void): () => void {
    this.observers.add(fn)
    return () => this.observers.delete(fn)
  }

  /** @internal Records a closed window: an answer clears a peer's misses, silence adds one. */
  learn(answered: Iterable<PeerIdStr>, unanswered: Iterable<PeerIdStr>): void {
    for (const p of answered) this.misses.delete(p)
    for (const p of unanswered) {
      const n = (this.misses.get(p) ?? 0) + 1
      this.misses.delete(p)
      this.misses.set(p, n)
    }
    while (this.misses.size > this.maxTracked) this.misses.delete(this.misses.keys().next().value as string)
  }

  /** @internal */
  notify(summary: WindowSummary): void {
    for (const fn of this.observers) fn(summary)
  }
}

/** One bid request's window: the answers seen so far and the rule that closes it. */
export class BidWindow {
  private readonly answers = new Map<PeerIdStr, 'bid' | 'decline'>()
  private firstAnswerAt: number | undefined
  private bids = 0
  private closed: WindowSummary | undefined

  constructor(
    private readonly owner: BidAudience,
    readonly asked: ReadonlySet<PeerIdStr>,
    readonly audience: ReadonlySet<PeerIdStr>,
    private readonly at: { jobId?: string; openedAt: number; deadline: number },
    private readonly enoughBids: number,
  ) {}

  get openedAt(): number {
    return this.at.openedAt
  }

  get deadline(): number {
    return this.at.deadline
  }

  /** Records a provider's answer (its first one counts; later ones are ignored). */
  answer(peer: PeerIdStr, kind: 'bid' | 'decline', at: number): void {
    if (this.closed !== undefined || this.answers.has(peer)) return
    this.answers.set(peer, kind)
    if (kind === 'bid') this.bids++
    this.firstAnswerAt ??= at
  }

  /** Whether any audience member has not answered yet. */
  get waitingForSome(): boolean {
    for (const p of this.audience) if (!this.answers.has(p)) return true
    return false
  }

  /** The time the window closes if no further answer comes. */
  closesAt(): number {
    if (this.firstAnswerAt === undefined) return this.deadline
    return Math.min(this.deadline, this.firstAnswerAt + this.owner.stragglerMs)
  }

  /** Why the window is closed at `now`, or undefined while it stays open. */
  closedBy(now: number): CloseReason | undefined {
    if (this.bids >= this.enoughBids) return 'enough_bids'
    // An empty audience (every subscriber known to be silent) has nothing to close early on.
    if (this.audience.size > 0 && !this.waitingForSome) return 'all_answered'
    if (now >= this.deadline) return 'deadline'
    if (now >= this.closesAt()) return 'stragglers'
    return undefined
  }

  /**
   * Ends the window and teaches the audience: peers that answered are no longer silent; asked
   * peers that did not answer gain a miss, unless the window closed on enough bids (they may have
   * been slower, not silent). Idempotent: returns the first summary.
   */
  close(now: number): WindowSummary {
    if (this.closed !== undefined) return this.closed
    const reason = this.closedBy(now) ?? 'deadline'
    const unanswered = reason === 'enough_bids' ? [] : [...this.asked].filter((p) => !this.answers.has(p))
    this.owner.learn(this.answers.keys(), unanswered)
    this.closed = {
      jobId: this.at.jobId,
      reason,
      asked: this.asked.size,
      audience: this.audience.size,
      answered: this.answers.size,
      silent: unanswered.filter((p) => this.owner.isSilent(p)),
      openedAt: this.openedAt,
      closedAt: now,
    }
    this.owner.notify(this.closed)
    return this.closed
  }
}

/** Where a window's answers come from: the job's session (session.ts). */
export interface AnswerSource {
  readonly bids: ReadonlyArray<{ provider: PeerIdStr }>
  readonly declines: ReadonlyArray<{ provider: PeerIdStr }>
  /** Resolves when `ready()` is true (checked at each arrival) or after `timeoutMs`. */
  until(ready: () => boolean, timeoutMs: number, signal: AbortSignal): Promise<boolean>
}

/**
 * Feeds the answers (bids and declines, in arrival order) into `window` and resolves once it
 * closes: woken by each arrival, and by a timer re-armed whenever the window's closing time
 * moves (the first answer brings it forward). Rejects when `signal` aborts.
 */
export async function waitForWindow(
  window: BidWindow,
  answers: AnswerSource,
  clock: Pick<Clock, 'now'>,
  signal: AbortSignal,
): Promise<void> {
  let bids = 0
  let declines = 0
  const feed = () => {
    for (; bids < answers.bids.length; bids++) window.answer(answers.bids[bids].provider, 'bid', clock.now())
    for (; declines < answers.declines.length; declines++)
      window.answer(answers.declines[declines].provider, 'decline', clock.now())
  }
  for (;;) {
    feed()
    if (window.closedBy(clock.now()) !== undefined) return
    const armed = window.closesAt()
    await answers.until(
      () => {
        feed()
        return window.closedBy(clock.now()) !== undefined || window.closesAt() !== armed
      },
      armed - clock.now(),
      signal,
    )
  }
}
