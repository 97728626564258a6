import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createActor, toPromise } from 'xstate'
import { KeyPair } from '../../../actors/identity.js'
import { BlobService } from '../../../dms/blobs/service.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { silentLogger } from '../../../dms/log.js'
import type { PublishInput } from '../../../dms/provider/bid-context.js'
import { publishActor } from '../../../dms/provider/publish.js'
import { hashOutputs } from '../../../dms/workload/outputs.js'
import { openDb, type Db } from '../../../dms/store/db.js'

const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex')

/**
 * A hostile requester runs a job on this node whose outputs are bytes the node already holds (an
 * input it fetched, a blob its user put, another job's outputs it fetched), then releases that
 * job's archive (`/dms/blob/release`): only an archive that came into the store by being
 * published may be deleted by its grantee's release.
 */
describe('publish: output archives and their release by the grantee', function () {
  let dir: string
  let db: Db
  let blobs: BlobService
  let used: Set<string>

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dms-publish-'))
    const store = new BlobStore({ dir: join(dir, 'blobs') })
    await store.start()
    db = await openDb(join(dir, 'db'))
    used = new Set()
    blobs = new BlobService({
      store,
      db,
      log: silentLogger,
      now: () => 1,
      inUse: (s: string) => Promise.resolve(used.has(s)),
    })
  })
  afterEach(async function () {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** Publishes a run of `jobId` for `peer` whose archive is `bytes` (written where the executor writes). */
  async function publish(peer: string, jobId: string, bytes: string): Promise<string> {
    const file = join(blobs.store.tmpDir, `archive.${jobId}`)
    await writeFile(file, bytes)
    const id = sha(bytes)
    const outputs = [{ path: 'out.txt', sha256: sha('x'), size: 1 }]
    const input = {
      allocation: {
        allocationId: `alloc-${jobId}`,
        contract: { contract: { terms: { jobId, contractId: `c-${jobId}` } } },
      },
      requester: { peer, inbox: 'orchestrator' },
      run: {
        status: 'completed',
        exitCode: 0,
        stdout: '',
        stderr: '',
        truncated: false,
        outputs,
        archive: { file, sha256: id, size: Buffer.byteLength(bytes) },
        outputsHash: hashOutputs(outputs),
        usage: { cpuSeconds: 0, memoryBytes: 0, wallSeconds: 0 },
      },
    } as unknown as PublishInput
    // The actor reads the contract's terms as `contract.terms`.
    ;(input.allocation.contract as unknown as { terms: unknown }).terms = { jobId, contractId: `c-${jobId}` }
    const actor = createActor(
      publishActor({ blobs, key: KeyPair.generate(), clock: { now: () => 1 }, log: silentLogger }),
      { input },
    )
    actor.start()
    const out = await toPromise(actor)
    assert.equal(out.message.archive?.sha256, id)
    assert.equal(existsSync(file), false, "the executor's archive file is not left behind")
    return id
  }

  it("a grantee's release deletes an archive that came into the store by being published", async function () {
    const id = await publish('requester', 'job-1', 'outputs of job-1')
    assert.deepEqual(await blobs.release('requester', id, 'job-1'), { removed: true })
    assert.equal(await blobs.store.has(id), false)
  })

  it('published again after a restart (the file taken already, the blob here): granted, and still released', async function () {
    const id = await publish('requester', 'job-1', 'outputs of job-1')
    // The machine restored in `publishing` publishes again: its archive file is gone now.
    await blobs.publishArchive(
      'requester',
      { file: join(blobs.store.tmpDir, 'archive.job-1'), sha256: id, size: 16 },
      'job-1',
    )
    assert.ok(await blobs.serve('requester', { sha256: id, offset: 0, length: 4 }))
    assert.deepEqual(await blobs.release('requester', id, 'job-1'), { removed: true })
  })

  it('a release never deletes a blob the node held before publishing the same bytes (its own input, an upload)', async function () {
    const id = await blobs.store.put(Buffer.from('the user put these bytes'))
    assert.equal(await publish('attacker', 'job-m', 'the user put these bytes'), id)
    assert.deepEqual(await blobs.release('attacker', id, 'job-m'), { removed: false })
    assert.equal(await blobs.store.has(id), true, 'the blob the node held before stays')
    await assert.rejects(blobs.serve('attacker', { sha256: id, offset: 0, length: 4 }), {
      code: 'BLOB_NOT_GRANTED',
    })
  })

  it('a release never deletes a published archive a local job uses (fetched outputs or inputs with the same bytes)', async function () {
    const id = await publish('attacker', 'job-m', 'outputs a local job fetched too')
    used.add(id)
    assert.deepEqual(await blobs.release('attacker', id, 'job-m'), { removed: false })
    assert.equal(await blobs.store.has(id), true)
  })

  it('the same archive published for two requesters is deleted at the last release, in either order', async function () {
    const id = await publish('r1', 'job-1', 'shared outputs')
    await publish('r2', 'job-2', 'shared outputs')
    assert.deepEqual(await blobs.release('r1', id, 'job-1'), { removed: false })
    assert.equal(await blobs.store.has(id), true)
    assert.deepEqual(await blobs.release('r2', id, 'job-2'), { removed: true })
    assert.equal(await blobs.store.has(id), false)
  })
})
