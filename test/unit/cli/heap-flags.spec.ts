/**
 * The launcher's V8 settings (bin/heap-flags.js): a small young generation unless the user chose
 * its size themselves, in NODE_OPTIONS or on node's command line.
 */
import assert from 'node:assert/strict'
// @ts-expect-error -- plain JavaScript beside bin/dms.js, without a declaration file
import { heapFlags, YOUNG_GENERATION_FLAGS } from '../../../bin/heap-flags.js'

const flags = heapFlags as (nodeOptions: string | undefined, execArgv: readonly string[]) => string[]

describe('launcher heap flags (bin/heap-flags.js)', () => {
  it('keeps the young generation at its initial size by default', () => {
    assert.deepEqual(flags(undefined, []), ['--semi-space-growth-factor=1'])
    assert.deepEqual(flags('', []), YOUNG_GENERATION_FLAGS)
    assert.deepEqual(
      flags('--max-old-space-size=512 --import=x.mjs', ['--enable-source-maps']),
      YOUNG_GENERATION_FLAGS,
    )
  })

  it("sets nothing when NODE_OPTIONS or node's command line size the young generation", () => {
    for (const given of [
      '--max-semi-space-size=16',
      '--max-old-space-size=512 --max-semi-space-size=8',
      '--max_semi_space_size=16',
      '--min-semi-space-size=4',
      '--semi-space-growth-factor=2',
    ]) {
      assert.deepEqual(flags(given, []), [], given)
      assert.deepEqual(flags(undefined, given.split(' ')), [], `execArgv ${given}`)
    }
  })
})
