import type { StoreName } from './tables.js'
import { DmsError } from '../../actors/errors.js'
import { Level } from 'level'

/** One level database per node; each repository takes a sublevel of it. */
export type Db = Level<string, string>

export class DataDirInUseError extends DmsError {
  constructor(readonly path: string) {
    super(
      'DATA_DIR_IN_USE',
      `another dms is using the data directory ${path}: stop it first, or choose another --data-dir`,
    )
  }
}

/** Opens (creating if needed) the node's database at `path`. */
export async function openDb(path: string): Promise<Db> {
  const db = new Level<string, string>(path, { valueEncoding: 'utf8' })
  try {
    await db.open()
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause
    if (cause?.code === 'LEVEL_LOCKED' || /lock/i.test(cause?.message ?? ''))
      throw new DataDirInUseError(path)
    throw err
  }
  return db
}

/** A JSON repository over one sublevel. */
export type SubDb = ReturnType<typeof subOf>
/** The sublevel of a table of `STORES` (tables.ts): the one place a node opens one. */
export function subOf(db: Db, name: StoreName) {
  return db.sublevel<string, string>(name, { valueEncoding: 'utf8' })
}

export class Repo<T> {
  readonly sub: SubDb
  constructor(db: Db, name: StoreName) {
    this.sub = subOf(db, name)
  }
  async get(key: string): Promise<T | undefined> {
    const v = await this.sub.get(key)
    return v === undefined ? undefined : (JSON.parse(v) as T)
  }
  async put(key: string, value: T): Promise<void> {
    await this.sub.put(key, JSON.stringify(value))
  }
  async del(key: string): Promise<void> {
    await this.sub.del(key)
  }
  async values(): Promise<T[]> {
    const out: T[] = []
    for await (const v of this.sub.values()) out.push(JSON.parse(v) as T)
    return out
  }
  /** A batch operation for this repo, to combine with others in one atomic `db.batch`. */
  putOp(key: string, value: T) {
    return { type: 'put' as const, sublevel: this.sub, key, value: JSON.stringify(value) }
  }
  delOp(key: string) {
    return { type: 'del' as const, sublevel: this.sub, key }
  }
}
