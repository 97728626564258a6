/**
 * compactHeap (dms/cli/compact-heap.ts): old-space pages where a few live objects sit among
 * garbage are given back, where a plain full GC keeps them; and no `gc` is left in the caller's
 * context.
 */
import assert from 'node:assert/strict'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { compactHeap } from '../../../dms/cli/compact-heap.js'

const MiB = 1024 * 1024

describe('compactHeap', () => {
  it('gives back the old-space pages a plain full GC keeps', () => {
    setFlagsFromString('--expose-gc')
    const plainGc = runInNewContext('gc') as () => void
    setFlagsFromString('--no-expose-gc')
    // One object in 2 stays: after the others die, every page is half full, too full for a
    // plain full GC to move (it moves only nearly empty pages), which compaction still empties.
    const held: { kept: object[]; garbage?: object[] } = { kept: [], garbage: [] }
    for (let i = 0; i < 400_000; i++)
      (i % 2 === 0 ? held.kept : held.garbage!).push({ i, s: 'x'.repeat(40) + i })
    compactHeap() // everything alive so far now in old space
    held.garbage = undefined
    // Plain full GCs until they give back nothing more (the first one's sweeping ends later).
    for (let i = 0; i < 3; i++) plainGc()
    const plain = process.memoryUsage().heapTotal
    compactHeap()
    const compacted = process.memoryUsage().heapTotal
    assert.equal(held.kept.length, 200_000)
    assert.ok(plain - compacted > 8 * MiB, `heap total after a plain GC ${plain}, compacted ${compacted}`)
  })

  it('exposes no gc to the caller', () => {
    compactHeap()
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined')
  })
})
