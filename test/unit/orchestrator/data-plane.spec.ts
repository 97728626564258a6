import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Actor } from '../../../actors/actor.js'
import { BlobService } from '../../../dms/blobs/service.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { writeTar } from '../../../dms/blobs/tar.js'
import { hashOutputs, sha256Hex } from '../../../dms/executor/outputs.js'
import { silentLogger } from '../../../dms/log.js'
import type { JobResult, OutputEntry } from '../../../dms/messages.js'
import { fetchAndCheckOutputs, resolveInputs } from '../../../dms/orchestrator/data-plane.js'
import { openDb, type Db } from '../../../dms/store/db.js'

/** Never used: every archive in these tests is already in the store, so nothing is fetched. */
const noNetwork = undefined as unknown as Actor

describe('requester data plane: resolving inputs, checking output archives', function () {
  let dir: string
  let db: Db
  let blobs: BlobService

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dms-dataplane-'))
    const store = new BlobStore({ dir: join(dir, 'blobs') })
    await store.start()
    db = await openDb(join(dir, 'db'))
    blobs = new BlobService({ store, db, log: silentLogger, now: () => 1 })
  })
  afterEach(async function () {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('stores inline inputs as blobs and refuses a hash it does not have', async function () {
    const resolved = await resolveInputs(blobs, [
      { path: 'a', contentBase64: Buffer.from('hi').toString('base64') },
    ])
    assert.deepEqual(resolved, [{ path: 'a', sha256: sha256Hex(Buffer.from('hi')), size: 2 }])
    await assert.rejects(resolveInputs(blobs, [{ path: 'b', sha256: 'cd'.repeat(32) }]), {
      code: 'INVALID_JOB_SPEC',
      field: 'inputs.0.sha256',
    })
  })

  async function resultWith(files: Array<{ path: string; content: string }>, manifest?: OutputEntry[]) {
    const tar = writeTar(files.map((f) => ({ path: f.path, content: Buffer.from(f.content) })))
    const archive = { sha256: await blobs.store.put(tar), size: tar.length }
    const outputs =
      manifest ??
      files.map((f) => ({ path: f.path, sha256: sha256Hex(Buffer.from(f.content)), size: f.content.length }))
    const receipt = { receipt: { outputsHash: hashOutputs(outputs) }, signature: '' }
    return {
      jobId: 'j',
      receipt,
      stdout: '',
      stderr: '',
      truncated: false,
      outputs,
      archive,
    } as unknown as JobResult
  }
  const check = (r: JobResult) => fetchAndCheckOutputs(noNetwork, blobs, { peer: 'p', addrs: [] }, r)

  it('accepts an archive that matches its manifest and the receipt', async function () {
    assert.deepEqual(await check(await resultWith([{ path: 'x', content: '42' }])), { ok: true })
  })

  it('refuses an archive whose file differs from the manifest, or lacks a listed file', async function () {
    const lying = await resultWith(
      [{ path: 'x', content: '42' }],
      [{ path: 'x', sha256: sha256Hex(Buffer.from('43')), size: 2 }],
    )
    assert.deepEqual(await check(lying), {
      ok: false,
      reason: 'x in the archive does not match its manifest entry',
    })
    const short = await resultWith(
      [{ path: 'x', content: '42' }],
      [
        { path: 'x', sha256: sha256Hex(Buffer.from('42')), size: 2 },
        { path: 'y', sha256: sha256Hex(Buffer.from('1')), size: 1 },
      ],
    )
    assert.deepEqual(await check(short), { ok: false, reason: 'archive holds 1 files, the manifest lists 2' })
  })

  it('refuses a manifest that is not what the provider signed', async function () {
    const r = await resultWith([{ path: 'x', content: '42' }])
    const forged = {
      ...r,
      receipt: { ...r.receipt, receipt: { ...r.receipt.receipt, outputsHash: 'ab'.repeat(32) } },
    }
    assert.deepEqual(await check(forged), {
      ok: false,
      reason: 'the manifest does not hash to the receipt outputsHash',
    })
  })
})
