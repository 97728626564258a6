/**
 * Secondary indexes of the stored jobs (sublevel `job-index`), written in the same atomic batch as
 * the job record they follow, so listing pages through keys and never scans every job
 * (specs/rest-api.md, "Listing jobs"). One key per job and scope:
 *
 *   all!<createdAt>!<id>            every job
 *   s:<state>!<createdAt>!<id>      by state
 *   q:<queue>!<createdAt>!<id>      by queue
 *   qs:<queue>:<state>!<createdAt>!<id>  by queue and state
 *   b:<sha256>!<createdAt>!<id>     the blobs it uses (inputs, output archive): retention keeps a
 *                                   blob while a stored job uses it
 *
 * `createdAt` is zero-padded, so keys sort by creation time, then id: a page is one range read,
 * newest first, and its cursor is the position of its last key.
 */
import { subOf, type Db, type SubDb } from '../store/db.js'
import { STORES } from '../store/tables.js'
import type { JobId, JobState } from './job-record.js'

/** Written once every stored job is indexed (the migration of stores from before the index). */
const VERSION_KEY = '~version'
const VERSION = String(STORES.jobIndex.version)
const WIDTH = 15

/** What the index knows of a job: enough to place it. */
export interface Indexed {
  state: JobState
  record: {
    id: JobId
    createdAt: number
    spec: { queue?: string; inputs?: Array<{ sha256?: string }> }
    result?: { archive?: { sha256: string } }
  }
}

/** The blobs a job uses: its inputs' and its output archive's ids. */
export function blobsOf(j: Indexed): string[] {
  const ids = (j.record.spec.inputs ?? []).flatMap((i) => (i.sha256 !== undefined ? [i.sha256] : []))
  const archive = j.record.result?.archive?.sha256
  return [...new Set(archive !== undefined ? [...ids, archive] : ids)]
}

export interface JobQuery {
  state?: JobState
  queue?: string
  /** Only jobs created at or after this time (ms since the epoch). */
  since?: number
  limit: number
  /** The `next` of the previous page. */
  cursor?: string
}

export interface IdPage {
  ids: JobId[]
  /** Where the next page starts; absent on the last page. */
  next?: string
}

const pad = (n: number) => String(Math.max(0, Math.floor(n))).padStart(WIDTH, '0')
const position = (j: Indexed) => `${pad(j.record.createdAt)}!${j.record.id}`

/** The scopes a job is listed under. */
export function scopesOf(j: Indexed): string[] {
  const scopes = ['all', `s:${j.state}`]
  const q = j.record.spec.queue
  if (q !== undefined) scopes.push(`q:${q}`, `qs:${q}:${j.state}`)
  for (const b of blobsOf(j)) scopes.push(`b:${b}`)
  return scopes
}

function scopeOf(q: Pick<JobQuery, 'state' | 'queue'>): string {
  if (q.queue !== undefined) return q.state !== undefined ? `qs:${q.queue}:${q.state}` : `q:${q.queue}`
  return q.state !== undefined ? `s:${q.state}` : 'all'
}

/** A cursor is opaque to clients: the position of the last job of a page, base64url. */
export const encodeCursor = (pos: string) => Buffer.from(pos, 'utf8').toString('base64url')
export function decodeCursor(cursor: string): string | undefined {
  const pos = Buffer.from(cursor, 'base64url').toString('utf8')
  return /^\d{15}![A-Za-z0-9-]{1,100}$/.test(pos) ? pos : undefined
}

export class JobIndex {
  readonly sub: SubDb

  constructor(private readonly db: Db) {
    this.sub = subOf(db, STORES.jobIndex.name)
  }

  /** The batch operations that move a job's keys from `prev` to `next` (either may be absent). */
  ops(prev: Indexed | undefined, next: Indexed | undefined) {
    const keys = (j: Indexed | undefined) =>
      new Set(j === undefined ? [] : scopesOf(j).map((s) => `${s}!${position(j)}`))
    const before = keys(prev)
    const after = keys(next)
    const id = (next ?? prev)?.record.id ?? ''
    return [
      ...[...before]
        .filter((k) => !after.has(k))
        .map((key) => ({ type: 'del' as const, sublevel: this.sub, key })),
      ...[...after]
        .filter((k) => !before.has(k))
        .map((key) => ({ type: 'put' as const, sublevel: this.sub, key, value: id })),
    ]
  }

  /** One page of job ids, newest first. `cursor` must come from `decodeCursor`. */
  async page(q: Omit<JobQuery, 'cursor'> & { position?: string }): Promise<IdPage> {
    const scope = scopeOf(q)
    const ids: JobId[] = []
    let last: string | undefined
    const range = {
      gte: `${scope}!${q.since !== undefined ? pad(q.since) : ''}`,
      lt: q.position !== undefined ? `${scope}!${q.position}` : `${scope}!~`,
      reverse: true,
      limit: q.limit + 1,
    }
    for await (const [key, id] of this.sub.iterator(range)) {
      if (ids.length === q.limit) return { ids, next: encodeCursor(last as string) }
      ids.push(id)
      last = key.slice(scope.length + 1)
    }
    return { ids }
  }

  /** How many jobs a scope lists (a range of keys, read once: at start, to count a queue). */
  async count(q: Pick<JobQuery, 'state' | 'queue'>): Promise<number> {
    const scope = scopeOf(q)
    let n = 0
    for await (const _ of this.sub.keys({ gte: `${scope}!`, lt: `${scope}!~` })) n++
    return n
  }

  /** How many stored jobs use blob `sha256`. */
  async blobUsers(sha256: string): Promise<number> {
    let n = 0
    for await (const _ of this.sub.keys({ gte: `b:${sha256}!`, lt: `b:${sha256}!~` })) n++
    return n
  }

  /** Positions (`createdAt!id`) of every job in `state`, oldest first: keys only (retention). */
  async positions(state: JobState): Promise<string[]> {
    const scope = `s:${state}`
    const out: string[] = []
    for await (const key of this.sub.keys({ gte: `${scope}!`, lt: `${scope}!~` }))
      out.push(key.slice(scope.length + 1))
    return out
  }

  /**
   * Indexes every stored job once, for a store written before the index existed (dms 0.1 and
   * main before issue 18); later starts read one key and return.
   */
  async migrate(jobs: AsyncIterable<Indexed>): Promise<number> {
    if ((await this.sub.get(VERSION_KEY)) === VERSION) return 0
    let batch: ReturnType<JobIndex['ops']> = []
    let n = 0
    for await (const j of jobs) {
      batch.push(...this.ops(undefined, j))
      n++
      if (batch.length >= 1000) {
        await this.db.batch(batch)
        batch = []
      }
    }
    await this.db.batch([...batch, { type: 'put', sublevel: this.sub, key: VERSION_KEY, value: VERSION }])
    return n
  }
}
