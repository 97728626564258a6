/**
 * Outputs on demand (kept-outputs.ts): only a completed job's; an archive that is already here is
 * still checked against the job's own manifest, and a mismatch is refused without deleting a blob
 * another job's outputs may be.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Actor } from '../../../actors/actor.js'
import { systemClock } from '../../../actors/clock.js'
import { BlobService } from '../../../dms/blobs/service.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { silentLogger } from '../../../dms/log.js'
import { KeptOutputs } from '../../../dms/orchestrator/kept-outputs.js'
import type { StoredJob } from '../../../dms/orchestrator/job-store.js'
import type { OutputEntry } from '../../../dms/protocol/messages.js'
import { hashOutputs } from '../../../dms/workload/outputs.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { newParty } from '../../helpers/contracts.js'
import { tarOf } from '../../helpers/tar.js'

const provider = newParty().peer
const sha = (s: string) => createHash('sha256').update(s).digest('hex')

describe('outputs on demand (kept-outputs)', function () {
  let dir: string
  let db: Db
  let blobs: BlobService
  const jobs = new Map<string, StoredJob>()
  let spawned = 0
  const kept = () =>
    new KeptOutputs({
      // Never used to fetch: every archive here is already in the store.
      system: { spawn: () => (spawned++, {} as Actor), despawn: () => undefined },
      blobs,
      clock: systemClock,
      get: (id) => Promise.resolve(jobs.get(id)),
      requestTimeoutMs: 1000,
      pace: { minBytesPerSecond: 1024, graceMs: 1000 },
    })
  const job = (
    id: string,
    state: string,
    archive: { sha256: string; size: number },
    outputs: OutputEntry[],
  ) =>
    jobs.set(id, {
      state,
      record: {
        id,
        spec: { resources: { cpu: 1, memoryBytes: 1 << 26, diskBytes: 0, gpus: 0 }, outputsStay: true },
        winner: { bidId: 'b', provider, why: '' },
        result: {
          jobId: id,
          receipt: { receipt: { outputsHash: hashOutputs(outputs) }, signature: '' },
          stdout: '',
          stderr: '',
          truncated: false,
          outputs,
          archive,
        },
      },
    } as unknown as StoredJob)

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dms-kept-'))
    const store = new BlobStore({ dir: join(dir, 'blobs') })
    await store.start()
    db = await openDb(join(dir, 'db'))
    blobs = new BlobService({ store, db, log: silentLogger, now: () => 1 })
    jobs.clear()
  })
  afterEach(async function () {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it("answers a completed job's checked manifest; refuses a job not completed or unknown", async function () {
    const written = await tarOf(join(dir, 'a.tar'), [{ path: 'k.txt', content: Buffer.from('kept') }])
    const archive = { sha256: written.sha256, size: written.size }
    await blobs.store.adopt(written.file, archive)
    const files = [{ path: 'k.txt', sha256: sha('kept'), size: 4 }]
    job('done', 'completed', archive, files)
    job('busy', 'running', archive, files)
    assert.deepEqual(await kept().fetch('done'), { jobId: 'done', files, archive })
    await assert.rejects(kept().fetch('busy'), { code: 'OUTPUTS_NOT_READY', statusCode: 409 })
    await assert.rejects(kept().fetch('ghost'), { code: 'JOB_NOT_FOUND' })
    assert.equal(spawned, 1, 'refused before any actor is spawned')
  })

  it('refuses a manifest its archive does not hold, keeping the blob (it may be another job’s outputs)', async function () {
    const written = await tarOf(join(dir, 'b.tar'), [{ path: 'k.txt', content: Buffer.from('kept') }])
    const archive = { sha256: written.sha256, size: written.size }
    await blobs.store.adopt(written.file, archive)
    job('liar', 'completed', archive, [{ path: 'k.txt', sha256: sha('other'), size: 4 }])
    await assert.rejects(kept().fetch('liar'), (err: Error & { code: string; statusCode: number }) => {
      assert.equal(err.code, 'OUTPUTS_NOT_FETCHED')
      assert.equal(err.statusCode, 502)
      assert.match(err.message, /k\.txt in the archive does not match its manifest entry/)
      return true
    })
    assert.equal(await blobs.store.has(archive.sha256), true)
  })

  it('two fetches of one archive at once, one from a lying provider: the verified blob stays', async function () {
    const written = await tarOf(join(dir, 'c.tar'), [{ path: 'k.txt', content: Buffer.from('kept') }])
    const bytes = await readFile(written.file)
    const archive = { sha256: written.sha256, size: written.size }
    job('honest', 'completed', archive, [{ path: 'k.txt', sha256: sha('kept'), size: 4 }])
    job('liar', 'completed', archive, [{ path: 'k.txt', sha256: sha('other'), size: 4 }])
    // The liar's provider holds its first chunk until the honest fetch has been checked.
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const serve = (hold: boolean) =>
      ({
        request: async (_to: unknown, _w: unknown, req: { offset: number; length: number }) => {
          if (hold) await held
          return { size: bytes.length, data: bytes.subarray(req.offset, req.offset + req.length) }
        },
      }) as unknown as Actor
    const actors = [serve(true), serve(false)]
    const outputs = new KeptOutputs({
      system: { spawn: () => actors.shift()!, despawn: () => undefined },
      blobs,
      clock: systemClock,
      get: (id) => Promise.resolve(jobs.get(id)),
      requestTimeoutMs: 1000,
      pace: { minBytesPerSecond: 1024, graceMs: 60_000 },
    })
    const lying = outputs.fetch('liar')
    const honest = outputs.fetch('honest')
    // Let the honest fetch through first where it can; the liar's is released once it settled.
    void honest.finally(release)
    setImmediate(release)
    await assert.rejects(lying, { code: 'OUTPUTS_NOT_FETCHED' })
    assert.deepEqual((await honest).archive, archive)
    assert.equal(await blobs.store.has(archive.sha256), true, 'the honest fetch verified it: it must stay')
  })
})
