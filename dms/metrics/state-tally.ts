/**
 * How many records are in each state (`dms_jobs`, `dms_allocations`), kept at events: each stored
 * change moves one record from its last state to its new one. Memory holds the records not yet in
 * a final state (a final record never changes again). At start the store is read once (`scan`);
 * a change seen while the scan runs wins over what the scan reads of the same record.
 */
import type { Gauge } from 'prom-client'

/** What a change did: its record's state before (undefined: new here) and now. */
export interface Change<Memo> {
  from?: string
  to: string
  /** Per-record notes of the caller (e.g. which contracts it counted), dropped once final. */
  memo: Memo
}

export class StateTally<Memo = undefined> {
  private readonly live = new Map<string, { state: string; memo: Memo }>()
  /** Records met by the scan or by an event during it; undefined when no scan runs. */
  private seen?: Set<string>

  constructor(
    private readonly gauge: Gauge<'state'>,
    private readonly isFinal: (state: string) => boolean,
    private readonly newMemo: () => Memo,
  ) {}

  /**
   * A record stored in `state` (or deleted: undefined). Returns the change, or undefined when it
   * changes nothing counted: the same state again, or a final record stored again.
   */
  observe(id: string, state: string | undefined): Change<Memo> | undefined {
    const first = this.seen !== undefined && !this.seen.has(id)
    this.seen?.add(id)
    const known = this.live.get(id)
    if (known === undefined) {
      // Not tracked: new, or final already (counted by the scan, or when it became final).
      if (state === undefined || (this.isFinal(state) && !first)) return undefined
      return this.add(id, state)
    }
    if (known.state === state) return undefined
    this.gauge.dec({ state: known.state })
    this.live.delete(id)
    if (state === undefined) return undefined
    return { ...this.add(id, state, known.memo), from: known.state }
  }

  /** Reads the store once: `each` gets every stored record; changes meanwhile are not lost. */
  async scan(each: (seed: (id: string, state: string) => Change<Memo> | undefined) => Promise<void>) {
    this.seen = new Set()
    try {
      await each((id, state) => {
        if (this.seen?.has(id)) return undefined
        this.seen?.add(id)
        return this.add(id, state)
      })
    } finally {
      this.seen = undefined
    }
  }

  /** Records tracked (not final). */
  get size(): number {
    return this.live.size
  }

  private add(id: string, state: string, memo: Memo = this.newMemo()): Change<Memo> {
    this.gauge.inc({ state })
    if (!this.isFinal(state)) this.live.set(id, { state, memo })
    return { to: state, memo }
  }
}
