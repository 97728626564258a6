/**
 * Contract listings in pages (specs/contract-db.md, "Operator API"): newest first, by the key
 * `(activatedAt, contractId)` that both backends index, with a bounded `limit` and a cursor
 * that names the last contract of the previous page. A contract's `activatedAt` never changes,
 * so pages read while contracts are added cover every contract stored at the first page once,
 * in order (the new ones are newer than any cursor). What comes from outside (a query string)
 * is checked here before a store reads anything.
 */
import { RefusedError } from '../../../actors/errors.js'
import type { StoredState } from '../records.js'

/** The largest page a listing returns: a request for more is refused, not cut. */
export const MAX_PAGE = 1000
/** A page's size when none is asked. */
export const DEFAULT_PAGE = 100
/** The longest contract id a cursor may name (the stores' id limit). */
const MAX_ID = 256

/** Where the previous page ended: its last contract. */
export interface ContractCursor {
  activatedAt: number
  id: string
}

/** One page of a listing: newest first; `state` selects one state. */
export interface ContractPageQuery {
  state?: StoredState
  /** 1 to MAX_PAGE. */
  limit: number
  /** The previous page's `next`; none: the newest contracts. */
  after?: ContractCursor
}

export interface ContractPageOf<T> {
  contracts: T[]
  /** The cursor of the next page; absent when this page is the last. */
  next?: ContractCursor
}

const STATES: readonly StoredState[] = ['active', 'settled', 'terminated', 'claimed', 'expired']

/** A limit that is not a whole number from 1 to MAX_PAGE. */
export class BadLimitError extends RefusedError {
  constructor(got: string) {
    super(
      'BAD_LIMIT',
      `limit must be a whole number from 1 to ${MAX_PAGE}, got ${JSON.stringify(got.slice(0, 40))}`,
    )
  }
}

/** A cursor that is not one a listing gave. */
export class BadCursorError extends RefusedError {
  constructor(got: string) {
    super(
      'BAD_CURSOR',
      `cursor must be the "next" of a previous page (<activatedAt>:<contract id>), got ${JSON.stringify(got.slice(0, 40))}`,
    )
  }
}

/** A state that is not a stored one. */
export class BadStateError extends RefusedError {
  constructor(got: string) {
    super('BAD_STATE', `state must be one of ${STATES.join(', ')}, got ${JSON.stringify(got.slice(0, 40))}`)
  }
}

/** A query value as text: a repeated field (an array) or anything else is shown, then refused. */
const text = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))

/** The cursor as a query string carries it: `<activatedAt>:<contract id>`. */
export const cursorText = (c: ContractCursor) => `${c.activatedAt}:${c.id}`

/** A query string's `limit` (absent: DEFAULT_PAGE); BadLimitError otherwise. */
export function limitIn(v: unknown): number {
  if (v === undefined) return DEFAULT_PAGE
  const s = text(v)
  if (!/^\d{1,4}$/.test(s)) throw new BadLimitError(s)
  const n = Number(s)
  if (n < 1 || n > MAX_PAGE) throw new BadLimitError(s)
  return n
}

/** A query string's `cursor` (absent: none); BadCursorError otherwise. */
export function cursorIn(v: unknown): ContractCursor | undefined {
  if (v === undefined) return undefined
  const s = text(v)
  // Printable ASCII only: a cursor is ours, and an id we stored is hex.
  const m = /^(\d{1,16}):([\x21-\x7e]{1,256})$/.exec(s)
  if (m === null) throw new BadCursorError(s)
  const activatedAt = Number(m[1])
  if (!Number.isSafeInteger(activatedAt)) throw new BadCursorError(s)
  return { activatedAt, id: m[2] }
}

/** A query string's `state` (absent: every state); BadStateError otherwise. */
export function stateIn(v: unknown): StoredState | undefined {
  if (v === undefined) return undefined
  const s = text(v)
  if (!(STATES as readonly string[]).includes(s)) throw new BadStateError(s)
  return s as StoredState
}

/** Checks a query a caller built (the stores refuse what the API would). */
export function checkPage(q: ContractPageQuery): void {
  if (!Number.isInteger(q.limit) || q.limit < 1 || q.limit > MAX_PAGE)
    throw new BadLimitError(String(q.limit))
  if (q.state !== undefined && !STATES.includes(q.state)) throw new BadStateError(String(q.state))
  const a = q.after
  if (
    a !== undefined &&
    (!Number.isSafeInteger(a.activatedAt) || a.activatedAt < 0 || a.id.length < 1 || a.id.length > MAX_ID)
  )
    throw new BadCursorError(`${String(a.activatedAt)}:${String(a.id)}`)
}
