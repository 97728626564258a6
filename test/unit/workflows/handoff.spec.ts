/**
 * Hand-offs from a real output archive (the streaming tar writer) in a real blob store: one file,
 * the whole archive under a folder, and the refusals.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BlobStore } from '../../../dms/blobs/store.js'
import type { JobResult } from '../../../dms/protocol/messages.js'
import { handOff } from '../../../dms/workflows/handoff.js'
import { tarOf } from '../../helpers/tar.js'

const sha = (s: string) => createHash('sha256').update(s).digest('hex')

describe('workflow hand-offs', () => {
  let dir: string
  let store: BlobStore
  let result: JobResult

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-handoff-'))
    store = new BlobStore({ dir: join(dir, 'blobs') })
    await store.start()
    const files = [
      { path: 'a.txt', content: Buffer.from('alpha') },
      { path: 'sub/b.txt', content: Buffer.from('beta') },
      { path: 'empty', content: Buffer.alloc(0) },
    ]
    const archive = await tarOf(join(dir, 'out.tar'), files)
    await store.adopt(archive.file, archive)
    result = {
      outputs: files.map((f) => ({
        path: f.path,
        sha256: sha(f.content.toString()),
        size: f.content.length,
      })),
      archive: { sha256: archive.sha256, size: archive.size },
    } as unknown as JobResult
  })
  after(() => rm(dir, { recursive: true, force: true }))

  it('one file becomes one input blob at `as`, with the hash its manifest lists', async () => {
    const inputs = await handOff(store, { fromTask: 'up', path: 'sub/b.txt', as: 'b.txt' }, result)
    assert.deepEqual(inputs, [{ path: 'b.txt', sha256: sha('beta'), size: 4 }])
    assert.equal(Buffer.from(await store.read(sha('beta'))).toString(), 'beta')
  })

  it('the whole archive is unpacked under `as`, empty files included', async () => {
    const inputs = await handOff(store, { fromTask: 'up', as: 'up' }, result)
    assert.deepEqual(
      inputs.map((i) => [i.path, i.sha256, i.size]),
      [
        ['up/a.txt', sha('alpha'), 5],
        ['up/empty', sha(''), 0],
        ['up/sub/b.txt', sha('beta'), 4],
      ],
    )
  })

  it('a file the upstream did not write, or an archive not here, is HANDOFF_FAILED', async () => {
    await assert.rejects(handOff(store, { fromTask: 'up', path: 'nope', as: 'nope' }, result), {
      code: 'HANDOFF_FAILED',
      message: 'up did not write nope',
    })
    const gone = { ...result, archive: { sha256: sha('not stored'), size: 1 } } as JobResult
    await assert.rejects(handOff(store, { fromTask: 'up', as: 'up' }, gone), {
      code: 'HANDOFF_FAILED',
      message: 'up left no output archive on this node',
    })
    // An upstream that wrote nothing hands on nothing as a whole archive.
    assert.deepEqual(
      await handOff(store, { fromTask: 'up', as: 'up' }, { outputs: [] } as unknown as JobResult),
      [],
    )
  })
})
