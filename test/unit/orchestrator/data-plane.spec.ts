import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Actor } from '../../../actors/actor.js'
import { BlobService } from '../../../dms/blobs/service.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { hashOutputs } from '../../../dms/workload/outputs.js'
import { silentLogger } from '../../../dms/log.js'
import type { JobResult, OutputEntry } from '../../../dms/protocol/messages.js'
import { fetchAndCheckOutputs, resolveInputs } from '../../../dms/orchestrator/data-plane.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { tarOf } from '../../helpers/tar.js'
import { newParty } from '../../helpers/contracts.js'

const sha256Hex = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

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
    const written = await tarOf(
      join(dir, `archive-${Math.random()}.tar`),
      files.map((f) => ({ path: f.path, content: Buffer.from(f.content) })),
    )
    const archive = { sha256: written.sha256, size: written.size }
    await blobs.store.adopt(written.file, archive)
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
  const provider = newParty().peer
  const check = (r: JobResult) => fetchAndCheckOutputs(noNetwork, blobs, { peer: provider, addrs: [] }, r)

  it('accepts an archive that matches its manifest and the receipt', async function () {
    assert.deepEqual(await check(await resultWith([{ path: 'x', content: '42' }])), { ok: true })
  })

  it('checks the archive from disk, never reading it whole into memory', async function () {
    const r = await resultWith([
      { path: 'a', content: 'x'.repeat(3 * 1024 * 1024) },
      { path: 'b/c', content: 'y' },
    ])
    // The store's whole-blob read is the only way to hold an archive in memory: take it away.
    blobs.store.read = () => Promise.reject(new Error('the archive was read into memory'))
    assert.deepEqual(await check(r), { ok: true })
  })

  it('refuses an archive with a file the manifest does not list, or a manifest listing a file twice', async function () {
    const extra = await resultWith(
      [
        { path: 'x', content: '42' },
        { path: 'y', content: '1' },
      ],
      [{ path: 'x', sha256: sha256Hex(Buffer.from('42')), size: 2 }],
    )
    // Judged by size before the fetch (archive-size rule), so the archive is never read.
    assert.deepEqual(await check(extra), {
      ok: false,
      reason: "archive of 3072 bytes announced, the manifest's files make 2048",
    })
    const x = { path: 'x', sha256: sha256Hex(Buffer.from('42')), size: 2 }
    const twice = await resultWith([{ path: 'x', content: '42' }], [x, x])
    assert.deepEqual(await check(twice), {
      ok: false,
      reason: "archive of 2048 bytes announced, the manifest's files make 3072",
    })
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
    assert.deepEqual(await check(short), {
      ok: false,
      reason: "archive of 2048 bytes announced, the manifest's files make 3072",
    })
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

  it("refuses, before fetching a byte, an archive whose size is not its manifest's, or outputs over the job's disk", async function () {
    // `noNetwork` would throw if anything were fetched: these are judged from the result alone.
    const manifest = [{ path: 'a', sha256: 'cd'.repeat(32), size: 1000 }]
    const receipt = { receipt: { outputsHash: hashOutputs(manifest) }, signature: '' }
    const claimed = (size: number, files = manifest) =>
      ({
        jobId: 'j',
        receipt: { ...receipt, receipt: { outputsHash: hashOutputs(files) } },
        stdout: '',
        stderr: '',
        truncated: false,
        outputs: files,
        archive: { sha256: 'ab'.repeat(32), size },
      }) as unknown as JobResult
    assert.deepEqual(await check(claimed(1024 * 1024 * 1024)), {
      ok: false,
      reason: "archive of 1073741824 bytes announced, the manifest's files make 2560",
    })
    const big = [{ path: 'a', sha256: 'cd'.repeat(32), size: 64 * 1024 * 1024 }]
    const overDisk = await fetchAndCheckOutputs(
      noNetwork,
      blobs,
      { peer: provider, addrs: [] },
      claimed(0, big),
      {
        diskBytes: 32 * 1024 * 1024,
      },
    )
    assert.deepEqual(overDisk, {
      ok: false,
      reason: "outputs total 67108864 bytes, more than the job's 33554432 bytes of disk",
    })
    // Without a disk, the default limit (1 GiB) applies.
    const huge = [{ path: 'a', sha256: 'cd'.repeat(32), size: 2 * 1024 * 1024 * 1024 }]
    assert.match((await check(claimed(0, huge))).ok ? '' : 'over', /over/)
  })
})
