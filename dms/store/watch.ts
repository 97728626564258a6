/**
 * Every write to one repository, as it is stored (level's `write` event on the database, which
 * sees sublevel writes with their prefixed keys, batches included). For counting at events what a
 * part stores, without the part having to tell: metrics of records by state.
 */
import type { Db } from './db.js'

interface WriteOp {
  type: 'put' | 'del'
  key: unknown
  value?: unknown
}

/**
 * Calls `fn(key, value)` after each write to the repository named `name` (`value` undefined for a
 * delete; parsed JSON for a put). Returns the unsubscribe function.
 */
export function watchRepo<T>(
  db: Db,
  name: string,
  fn: (key: string, value: T | undefined) => void,
): () => void {
  const prefix = db.sublevel(name).prefix
  const onWrite = (ops: WriteOp[]) => {
    for (const op of ops) {
      if (typeof op.key !== 'string' || !op.key.startsWith(prefix)) continue
      try {
        fn(op.key.slice(prefix.length), op.type === 'put' ? (JSON.parse(String(op.value)) as T) : undefined)
      } catch {
        // A watcher never fails the write it watches (the event is emitted to the writer).
      }
    }
  }
  db.on('write', onWrite)
  return () => db.off('write', onWrite)
}
