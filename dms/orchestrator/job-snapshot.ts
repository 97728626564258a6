/**
 * A job machine's persisted snapshot as the job store keeps it: without its context (the record
 * is stored beside it) and without the copies of the record its invoked steps hold as their input.
 * Every step is invoked with the context as its input; while the context has not changed since,
 * the step's input is that very object, so it is stored as a mark (`inputIsRecord`) and put back
 * from the record at restore. A step whose context changed after it started (a `CANCEL` while
 * `contracting`) keeps its own copy. This halves every write of a running job. Records stored
 * before keep their copies and restore as they are. Spec: specs/state-machines.md ("Persistence").
 */
import type { JobRecord } from './job-record.js'

interface Child {
  snapshot?: { input?: unknown; inputIsRecord?: boolean } & Record<string, unknown>
  [k: string]: unknown
}
interface Persisted {
  context?: unknown
  children?: Record<string, Child>
  [k: string]: unknown
}

/**
 * xstate's persisted snapshot of `actor` now (`snap`, its current snapshot), made without its
 * context: the context is stored beside it, and xstate's own `getPersistedSnapshot` walks every
 * object of it (looking for actor references) on every transition only for it to be dropped.
 */
export function persistedWithoutContext<S extends { context: unknown }>(
  actor: { logic: { getPersistedSnapshot(s: S): unknown } },
  snap: S,
): unknown {
  return actor.logic.getPersistedSnapshot({ ...snap, context: {} })
}

/** What is stored of `persisted` (xstate's persisted snapshot) whose live context is `context`. */
export function storedSnapshot(persisted: unknown, context: unknown): unknown {
  const p = persisted as Persisted
  const children: Record<string, Child> = {}
  for (const [id, child] of Object.entries(p.children ?? {})) {
    const s = child.snapshot
    if (s === undefined || s.input !== context) children[id] = child
    else {
      const { input: _record, ...rest } = s
      children[id] = { ...child, snapshot: { ...rest, inputIsRecord: true } }
    }
  }
  return { ...p, context: undefined, children }
}

/** The snapshot to restore a machine from: the stored one with `record` as its context and inputs. */
export function restoredSnapshot(stored: unknown, record: JobRecord): unknown {
  const p = stored as Persisted
  const children: Record<string, Child> = {}
  for (const [id, child] of Object.entries(p.children ?? {})) {
    const s = child.snapshot
    if (s?.inputIsRecord !== true) children[id] = child
    else {
      const { inputIsRecord: _mark, ...rest } = s
      children[id] = { ...child, snapshot: { ...rest, input: record } }
    }
  }
  return { ...p, context: record, ...(p.children !== undefined ? { children } : {}) }
}
