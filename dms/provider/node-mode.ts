/**
 * The provider's lifecycle mode (specs/node-lifecycle.md): whether it takes new jobs.
 *
 *   ready --pause--> paused --resume--> ready
 *   ready | paused --drain--> draining --no live bid left--> drained
 *   paused | draining | drained --resume--> ready
 *
 * Only `ready` bids; every other mode declines bid requests with its name as the reason, while
 * the bids it holds (reservations, contracts, runs) go on to their end. The mode is stored, so a
 * restarted provider stays paused or draining.
 */
import { STORES } from '../store/tables.js'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { DmsError } from '../../actors/errors.js'
import { Repo, type Db } from '../store/db.js'

export type ProviderMode = 'ready' | 'paused' | 'draining' | 'drained'
export const PROVIDER_MODES: ProviderMode[] = ['ready', 'paused', 'draining', 'drained']

export interface ModeView {
  mode: ProviderMode
  since: number
  /** Bids not yet ended (reservations, contracts, runs): what a drain waits for. */
  liveBids: number
}

/** A mode change the machine refuses (409). */
export class ModeChangeError extends DmsError {
  readonly statusCode = 409
  constructor(from: ProviderMode, what: string) {
    super('NODE_MODE_CONFLICT', `this provider is ${from}: it cannot ${what}`)
  }
}

type Event = 'pause' | 'resume' | 'drain' | 'drained'
const EDGES: Record<ProviderMode, Partial<Record<Event, ProviderMode>>> = {
  ready: { pause: 'paused', drain: 'draining' },
  paused: { resume: 'ready', drain: 'draining' },
  draining: { resume: 'ready', drained: 'drained' },
  drained: { resume: 'ready' },
}

export class ProviderModes {
  private readonly repo: Repo<{ mode: ProviderMode; since: number }>
  private current: { mode: ProviderMode; since: number }
  private readonly listeners = new Set<(v: ModeView) => void>()
  private drainedWaiters: Array<() => void> = []

  constructor(
    private readonly c: { db: Db; clock: Clock; log: Logger },
    /** How many bids are live now (the drain ends at zero). */
    private readonly liveBids: () => number,
  ) {
    this.repo = new Repo(c.db, STORES.providerMode.name)
    this.current = { mode: 'ready', since: c.clock.now() }
  }

  async start(): Promise<void> {
    this.current = (await this.repo.get('mode')) ?? this.current
    this.check()
  }

  view(): ModeView {
    return { ...this.current, liveBids: this.liveBids() }
  }

  /** Why a bid request is declined in this mode (`paused`, `draining`, `drained`), or undefined. */
  refusal(): string | undefined {
    return this.current.mode === 'ready' ? undefined : this.current.mode
  }

  onChange(fn: (v: ModeView) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  pause(): Promise<ModeView> {
    return this.move('pause', 'pause')
  }

  resume(): Promise<ModeView> {
    return this.move('resume', 'resume')
  }

  /** Stops bidding; `drained` once no bid is live (at once if none is). */
  async drain(): Promise<ModeView> {
    const v = await this.move('drain', 'drain')
    this.check()
    return v
  }

  /** Resolves once the provider is drained (at once if it is). */
  drained(): Promise<void> {
    if (this.current.mode === 'drained') return Promise.resolve()
    return new Promise((r) => this.drainedWaiters.push(r))
  }

  /** A bid ended (or a drain began): a draining provider with no live bid is drained. */
  check(): void {
    if (this.current.mode !== 'draining' || this.liveBids() > 0) return
    void this.move('drained').catch((err: unknown) => this.c.log.error({ err }, 'provider mode not stored'))
  }

  private async move(event: Event, what?: string): Promise<ModeView> {
    const next = EDGES[this.current.mode][event]
    if (next === undefined) {
      if (what !== undefined) throw new ModeChangeError(this.current.mode, what)
      return this.view()
    }
    this.current = { mode: next, since: this.c.clock.now() }
    this.c.log.info({ mode: next }, 'provider mode')
    const view = this.view()
    for (const fn of this.listeners) fn(view)
    if (next === 'drained') {
      for (const w of this.drainedWaiters.splice(0)) w()
    }
    await this.repo.put('mode', this.current)
    return view
  }
}
