/**
 * The launcher's V8 settings (bin/heap-flags.js): a small young generation for the processes that
 * stay up, unless the user chose its size themselves, in NODE_OPTIONS or on node's command line.
 */
import assert from 'node:assert/strict'
// @ts-expect-error -- plain JavaScript beside bin/dms.js, without a declaration file
import { heapFlags, YOUNG_GENERATION_FLAGS } from '../../../bin/heap-flags.js'

const flags = heapFlags as (
  nodeOptions: string | undefined,
  execArgv: readonly string[],
  args: readonly string[],
) => string[]
const RUN = ['run', '--config', 'node.json']

describe('launcher heap flags (bin/heap-flags.js)', () => {
  it('keeps the young generation of `dms run` and `dms contract-db run` at its initial size', () => {
    assert.deepEqual(flags(undefined, [], RUN), ['--semi-space-growth-factor=1'])
    assert.deepEqual(flags('', [], ['--log-level', 'run']), YOUNG_GENERATION_FLAGS)
    assert.deepEqual(flags('', [], ['contract-db', 'run', '--data-dir', 'x']), YOUNG_GENERATION_FLAGS)
    assert.deepEqual(
      flags('--max-old-space-size=512 --import=x.mjs', ['--enable-source-maps'], RUN),
      YOUNG_GENERATION_FLAGS,
    )
  })

  it('leaves short commands with V8’s default', () => {
    for (const args of [
      [],
      ['--help'],
      ['job', 'list'],
      ['contract-db', 'balance'],
      ['job', 'run', '--', 'run'],
    ])
      assert.deepEqual(flags(undefined, [], args), [], args.join(' '))
  })

  it("sets nothing when NODE_OPTIONS or node's command line size the young generation", () => {
    for (const given of [
      '--max-semi-space-size=16',
      '--max-old-space-size=512 --max-semi-space-size=8',
      '--max_semi_space_size=16',
      '--min-semi-space-size=4',
      '--semi-space-growth-factor=2',
    ]) {
      assert.deepEqual(flags(given, [], RUN), [], given)
      assert.deepEqual(flags(undefined, given.split(' '), RUN), [], `execArgv ${given}`)
    }
  })
})
