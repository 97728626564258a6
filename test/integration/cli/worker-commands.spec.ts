/**
 * `dms worker register|list` (specs/functions.md) through the built CLI against a real REST API
 * over a unix socket, with a real blob store and a real level database: the needs dance uploads
 * each missing blob once, and nothing when the node has them all.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { systemClock } from '../../../actors/clock.js'
import { detachedPorts } from '../../../dms/api/null-ports.js'
import { buildApi } from '../../../dms/api/server.js'
import type { BlobService } from '../../../dms/blobs/service.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { BlobUploads } from '../../../dms/blobs/uploads.js'
import { Functions } from '../../../dms/functions/functions.js'
import { silentLogger } from '../../../dms/log.js'
import { blobsPort, functionsPort } from '../../../dms/node-adapters.js'
import { openDb, type Db } from '../../../dms/store/db.js'

const exec = promisify(execFile)
const sha = (b: string) => createHash('sha256').update(b).digest('hex')

async function dms(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/dms.js', ...args], { timeout: 30_000 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number; stdout: string; stderr: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr }
  }
}

const RUN = '#!/bin/sh\ncat Inputs/* > "$2/out"\n'
const DATA = 'shared data\n'

describe('dms worker register|list (built CLI, real API, blob store and database)', function () {
  this.timeout(60_000)
  let dir: string
  let sock: string
  let db: Db
  let store: BlobStore
  let close: () => Promise<void>

  before(async function () {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    dir = await mkdtemp(join(tmpdir(), 'dms-cli-worker-'))
    store = new BlobStore({ dir: join(dir, 'blobs') })
    await store.start()
    db = await openDb(join(dir, 'db'))
    const functions = new Functions({
      db,
      clock: systemClock,
      blobs: store,
      jobs: { post: () => Promise.reject(new Error('no jobs here')), get: () => Promise.resolve(undefined) },
    })
    await functions.start()
    const { app } = buildApi(
      {
        ...detachedPorts(),
        blobs: blobsPort({ store } as BlobService, new BlobUploads({ store, clock: systemClock })),
        functions: functionsPort(functions),
      },
      { log: silentLogger },
    )
    sock = join(dir, 'api.sock')
    await app.listen({ path: sock })
    close = () => app.close()
    const w = join(dir, 'w')
    await mkdir(join(w, 'lib'), { recursive: true })
    await writeFile(join(w, 'run.sh'), RUN)
    await writeFile(join(w, 'lib', 'a.txt'), DATA)
    await writeFile(join(w, 'lib', 'b.txt'), DATA)
    await writeFile(
      join(w, 'worker.json'),
      JSON.stringify({
        name: 'cat',
        hostPlatform: 'linux',
        buildSystemVersion: 'b1',
        executables: [{ path: 'run.sh' }],
        files: [{ path: 'lib/a.txt' }, { path: 'lib/b.txt' }],
        cores: 1,
        timeout: 30,
        functions: [{ name: 'cat', version: '1' }],
      }),
    )
  })

  after(async function () {
    await close()
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('registers a folder, uploading each missing blob once, then nothing', async function () {
    const first = await dms('worker', 'register', join(dir, 'w'), '--socket', sock, '--json')
    assert.equal(first.code, 0, first.stderr)
    const reg = JSON.parse(first.stdout) as { id: string; registered: boolean; uploaded: number }
    assert.equal(reg.registered, true)
    assert.equal(reg.uploaded, 2, 'run.sh and the data both files hold: two blobs')
    assert.equal(await store.size(sha(RUN)), RUN.length)
    assert.equal(await store.size(sha(DATA)), DATA.length)
    const again = await dms('worker', 'register', join(dir, 'w'), '--socket', sock, '--json')
    assert.deepEqual(JSON.parse(again.stdout), { ...reg, uploaded: 0 })

    const listed = await dms('worker', 'list', '--socket', sock, '--json')
    const { workers, functions } = JSON.parse(listed.stdout) as {
      workers: Array<{ id: string; name: string }>
      functions: unknown[]
    }
    assert.deepEqual(
      workers.map((w) => [w.id, w.name]),
      [[reg.id, 'cat']],
    )
    assert.deepEqual(functions, [
      { function: 'cat', version: '1', buildSystemVersion: 'b1', workers: [reg.id] },
    ])
    const table = await dms('worker', 'list', '--socket', sock)
    assert.match(table.stdout, /^WORKER\s+NAME\s+BUILD SYSTEM\s+FUNCTIONS\s+REGISTERED\n/)
    assert.match(table.stdout, new RegExp(`${reg.id.slice(0, 12)}\\s+cat\\s+b1\\s+cat@1\\s`))
  })

  it('refuses a file outside the folder, and says what the node refused', async function () {
    const bad = join(dir, 'bad')
    await mkdir(bad)
    await writeFile(join(dir, 'outside.sh'), RUN)
    await writeFile(
      join(bad, 'worker.json'),
      JSON.stringify({ name: 'x', executables: [{ path: '../outside.sh' }] }),
    )
    const outside = await dms('worker', 'register', bad, '--socket', sock)
    assert.equal(outside.code, 1)
    assert.match(outside.stderr, /"\.\.\/outside\.sh" is not a path inside/)
    await writeFile(join(bad, 'run.sh'), RUN)
    await writeFile(
      join(bad, 'worker.json'),
      JSON.stringify({ name: 'x', executables: [{ path: 'run.sh' }] }),
    )
    const refused = await dms('worker', 'register', bad, '--socket', sock)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /hostPlatform: is required/)
  })
})
