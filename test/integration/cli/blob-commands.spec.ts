/**
 * `dms blob put|get` and `-o` (issue 20) through the built CLI against a real REST API over a unix
 * socket, with a real blob store on disk (a node with no roles: the blob routes need none).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { detachedPorts } from '../../../dms/api/null-ports.js'
import { buildApi } from '../../../dms/api/server.js'
import type { BlobService } from '../../../dms/blobs/service.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { BlobUploads } from '../../../dms/blobs/uploads.js'
import { systemClock } from '../../../actors/clock.js'
import { silentLogger } from '../../../dms/log.js'
import { blobsPort } from '../../../dms/node-adapters.js'

const exec = promisify(execFile)
const yaml = createRequire(import.meta.url)('js-yaml') as { load: (s: string) => unknown }
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex')

async function dms(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/dms.js', ...args], { timeout: 30_000 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number; stdout: string; stderr: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr }
  }
}

describe('dms blob put|get and -o (built CLI, real API and blob store)', function () {
  this.timeout(60_000)
  let dir: string
  let sock: string
  let close: () => Promise<void>
  const bytes = Buffer.from([0, 1, 2, 255, 10, 13])

  before(async function () {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    dir = await mkdtemp(join(tmpdir(), 'dms-cli-blob-'))
    const store = new BlobStore({ dir: join(dir, 'blobs') })
    await store.start()
    const { app } = buildApi(
      {
        ...detachedPorts(),
        blobs: blobsPort({ store } as BlobService, new BlobUploads({ store, clock: systemClock })),
      },
      { log: silentLogger },
    )
    sock = join(dir, 'api.sock')
    await app.listen({ path: sock })
    close = () => app.close()
    await writeFile(join(dir, 'data.bin'), bytes)
  })

  after(async function () {
    await close()
    await rm(dir, { recursive: true, force: true })
  })

  it('puts a file and prints its id as a table, JSON or YAML', async function () {
    const table = await dms('blob', 'put', join(dir, 'data.bin'), '--socket', sock)
    assert.equal(table.code, 0, table.stderr)
    assert.equal(table.stdout, `${'SHA256'.padEnd(64)}  SIZE  FILE\n${sha(bytes)}  6     data.bin\n`)
    const json = await dms('blob', 'put', join(dir, 'data.bin'), '--socket', sock, '-o', 'json')
    assert.deepEqual(JSON.parse(json.stdout), { file: join(dir, 'data.bin'), sha256: sha(bytes), size: 6 })
    const asYaml = await dms('blob', 'put', join(dir, 'data.bin'), '--socket', sock, '-o', 'yaml')
    assert.deepEqual(yaml.load(asYaml.stdout), JSON.parse(json.stdout))
    const missing = await dms('blob', 'put', join(dir, 'nope.bin'), '--socket', sock)
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /^dms: cannot upload .*nope\.bin: ENOENT/)
  })

  it('gets a blob to --out (checked, never over a file without --force) or to stdout', async function () {
    const out = join(dir, 'got.bin')
    const got = await dms('blob', 'get', sha(bytes), '--out', out, '--socket', sock)
    assert.equal(got.code, 0, got.stderr)
    assert.deepEqual(await readFile(out), bytes)
    const again = await dms('blob', 'get', sha(bytes), '--out', out, '--socket', sock)
    assert.equal(again.code, 1)
    assert.match(again.stderr, /already exists: give --force/)
    assert.equal((await dms('blob', 'get', sha(bytes), '--out', out, '--force', '--socket', sock)).code, 0)
    const piped = await exec(process.execPath, ['bin/dms.js', 'blob', 'get', sha(bytes), '--socket', sock], {
      encoding: 'buffer',
    })
    assert.deepEqual(piped.stdout, bytes)
    const unknown = await dms('blob', 'get', 'f'.repeat(64), '--socket', sock, '--out', join(dir, 'x'))
    assert.equal(unknown.code, 1)
    assert.match(unknown.stderr, /^dms: blob get: no blob f{64} on this node/)
    assert.equal(existsSync(join(dir, 'x')), false)
    assert.equal(existsSync(join(dir, 'x.part')), false)
    const bad = await dms('blob', 'get', 'ABC', '--socket', sock)
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /blob id: write the sha256 as 64 lowercase hex digits/)
  })

  it("a file over the node's blob limit is refused with the limit, nothing sent", async function () {
    const small = new BlobStore({ dir: join(dir, 'small-blobs'), maxBlobBytes: 4 })
    await small.start()
    const { app } = buildApi(
      {
        ...detachedPorts(),
        blobs: blobsPort(
          { store: small } as BlobService,
          new BlobUploads({ store: small, clock: systemClock }),
        ),
      },
      { log: silentLogger },
    )
    const smallSock = join(dir, 'small.sock')
    await app.listen({ path: smallSock })
    try {
      const r = await dms('blob', 'put', join(dir, 'data.bin'), '--socket', smallSock)
      assert.equal(r.code, 1, r.stderr)
      assert.match(
        r.stderr,
        /^dms: cannot upload .*data\.bin: blob of 6 bytes \(or more\) is over this node's limit of 4 bytes/,
      )
    } finally {
      await app.close()
    }
  })

  it('refuses an unknown -o, and --json with another -o, before doing anything', async function () {
    const r = await dms('blob', 'put', join(dir, 'data.bin'), '--socket', sock, '-o', 'xml')
    assert.equal(r.code, 1)
    assert.match(r.stderr, /^dms: -o\/--output: "xml" is not one of table, wide, json, yaml/)
    const both = await dms('blob', 'put', join(dir, 'data.bin'), '--socket', sock, '-o', 'yaml', '--json')
    assert.equal(both.code, 1)
    assert.match(both.stderr, /--json and -o yaml: give only one/)
  })
})
