/**
 * One compacting garbage collection, for a process that has just started and is about to idle
 * (`dms run` and `dms contract-db run` call it right after their ready line).
 *
 * Starting leaves garbage in V8's old space (the config checks, the schemas and codecs built,
 * the modules' top-level code), spread over pages that also hold live objects. A plain full GC
 * frees the objects but moves only nearly empty pages, so it keeps these; a compacting one moves
 * the live objects together and gives the emptied pages back to the system (measured on a
 * provider: no RSS back from a plain one). V8's memory reducer does that by itself, but
 * only some 10-30 s after the allocation rate has dropped; this does it at once: about 6 MB of a
 * provider's RSS, for one pause of 40-100 ms CPU at start (specs/benchmarks.md, "Idle memory").
 *
 * Node has no API for it: `gc` is taken from a fresh context with --expose-gc set only while
 * that context is made (the node's own context never gets a `gc`), and compaction is forced for
 * this one collection only.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

export function compactHeap(): void {
  setFlagsFromString('--expose-gc')
  let gc: () => void
  try {
    gc = runInNewContext('gc') as () => void
  } finally {
    setFlagsFromString('--no-expose-gc')
  }
  setFlagsFromString('--compact-on-every-full-gc')
  try {
    gc()
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc')
  }
}
