/**
 * The contract-db's check of a rejected result (OutputsArbiter) on a real blob store in a temp dir
 * and a real archive, with the provider played by a scripted actor (no network): what it finds,
 * what it keeps for the requester and for how long (on the manual clock), and one check per
 * contract however often the settle comes.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import type { Actor } from '../../../actors/actor.js'
import { RefusedError } from '../../../actors/errors.js'
import { BlobService, type ChunkRequest } from '../../../dms/blobs/service.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { signDoc } from '../../../dms/contracts/canonical.js'
import { DOMAIN, type Receipt, type SignedContract } from '../../../dms/contracts/model.js'
import { OutputsArbiter } from '../../../dms/contract-db/arbiter.js'
import { silentLogger } from '../../../dms/log.js'
import { W } from '../../../dms/protocol/behaviours.js'
import type { JobResult } from '../../../dms/protocol/messages.js'
import { hashOutputs } from '../../../dms/workload/outputs.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { makeContract, newParty } from '../../helpers/contracts.js'
import { tarOf } from '../../helpers/tar.js'

const HOUR = 3_600_000

describe('contract-db/arbiter (OutputsArbiter)', () => {
  const req = newParty()
  const prov = newParty()
  let dir: string
  let db: Db
  let blobs: BlobService
  let clock: ManualClock
  let contract: SignedContract
  let result: JobResult
  let archiveBytes: Buffer
  /** What the scripted provider was asked, by behaviour. */
  let asked: string[]
  let answer: (behaviour: string, payload: unknown) => unknown

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-arbiter-'))
    db = await openDb(join(dir, 'db'))
    const store = new BlobStore({ dir: join(dir, 'blobs') })
    await store.start()
    clock = new ManualClock(1_800_000_000_000)
    blobs = new BlobService({ store, db, log: silentLogger, now: () => clock.now() })
    contract = makeContract(req, prov, newParty().peer, { jobId: 'job-1', now: clock.now() })
    const a = await tarOf(join(dir, 'out.tar'), [{ path: 'answer.txt', content: Buffer.from('42\n') }])
    archiveBytes = await readFile(a.file)
    const outputs = [{ path: 'answer.txt', sha256: a.hashes[0], size: 3 }]
    const receipt: Receipt = {
      contractId: contract.terms.contractId,
      jobId: 'job-1',
      allocationId: 'alloc-1',
      status: 'completed',
      exitCode: 0,
      outputsHash: hashOutputs(outputs),
      usage: { wallSeconds: 1, cpuSeconds: 1, peakMemoryBytes: 1 },
      finishedAt: clock.now(),
    }
    result = {
      jobId: 'job-1',
      receipt: { receipt, signature: signDoc(prov.key, DOMAIN.receipt, receipt) },
      stdout: '',
      stderr: '',
      truncated: false,
      outputs,
      archive: { sha256: a.sha256, size: a.size },
    }
    asked = []
    answer = (behaviour, payload) => {
      if (behaviour === W.resultAgain.name) return result
      const c = payload as ChunkRequest
      return { size: archiveBytes.length, data: archiveBytes.subarray(c.offset, c.offset + c.length) }
    }
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  const arbiter = () => {
    const actor = {
      request: (_to: unknown, b: { name: string }, payload: unknown) => {
        asked.push(b.name)
        return Promise.resolve().then(() => answer(b.name, payload)) // a throw: a rejection
      },
    } as unknown as Actor
    return new OutputsArbiter({ actor, blobs, clock, log: silentLogger }, { handOnMs: HOUR })
  }

  it('overrules a rejection of outputs that match the receipt, and keeps them for the requester an hour', async () => {
    const a = arbiter()
    const sha = result.archive!.sha256
    // A settle sent twice while the check runs: one check, one answer for both.
    const [first, again] = await Promise.all([
      a.check(contract.terms, result.receipt),
      a.check(contract.terms, result.receipt),
    ])
    assert.equal(first?.outcome, 'overruled')
    assert.deepEqual(again, first)
    assert.equal(asked.filter((b) => b === W.resultAgain.name).length, 1)
    // Granted to the requester (and to no one else), kept an hour, then dropped.
    const chunk = await blobs.serve(req.peer, { sha256: sha, offset: 0, length: 512 })
    assert.equal(chunk.size, archiveBytes.length)
    assert.ok(Buffer.from(chunk.data).equals(archiveBytes.subarray(0, 512)))
    await assert.rejects(blobs.serve(prov.peer, { sha256: sha, offset: 0, length: 512 }), {
      name: 'BlobNotGrantedError',
    })
    clock.advance(HOUR - 1)
    await a.sweep(clock.now())
    assert.ok(await blobs.store.has(sha))
    clock.advance(1)
    await a.sweep(clock.now())
    assert.equal(await blobs.store.has(sha), false)
    await assert.rejects(blobs.serve(req.peer, { sha256: sha, offset: 0, length: 512 }), {
      name: 'BlobNotGrantedError',
    })
  })

  it('upholds it when the archive does not hold the receipt’s files, and keeps nothing', async () => {
    archiveBytes = Buffer.from(archiveBytes)
    archiveBytes[512] ^= 1 // the file's first byte: the archive hashes to another id
    const found = await arbiter().check(contract.terms, result.receipt)
    assert.equal(found?.outcome, 'upheld')
    assert.match(found?.reason ?? '', /archive not fetched/)
    assert.equal(await blobs.store.has(result.archive!.sha256), false)
  })

  it('upholds it when the provider answers with another receipt, or not at all, fetching nothing', async () => {
    const other = { ...result.receipt.receipt, exitCode: 1 }
    answer = (b) => {
      if (b === W.resultAgain.name)
        return { ...result, receipt: { receipt: other, signature: signDoc(prov.key, DOMAIN.receipt, other) } }
      throw new Error('not asked')
    }
    const found = await arbiter().check(contract.terms, result.receipt)
    assert.deepEqual(
      [found?.outcome, found?.reason],
      ['upheld', 'the provider answered with another receipt than the one it gave the requester'],
    )
    answer = () => {
      throw new RefusedError('NO_RESULT', 'none kept')
    }
    const silent = await arbiter().check(contract.terms, result.receipt)
    assert.equal(silent?.outcome, 'upheld')
    assert.match(silent?.reason ?? '', /did not give its result to the contract-db \(NO_RESULT\)/)
    assert.deepEqual(asked, [W.resultAgain.name, W.resultAgain.name])
  })

  it('fetches for at most maxConcurrent rejections at once; the others wait their turn', async () => {
    let open = 0
    let most = 0
    const gates: Array<() => void> = []
    const actor = {
      request: async (_to: unknown, b: { name: string }, payload: unknown) => {
        if (b.name !== W.resultAgain.name) return answer(b.name, payload)
        open++
        most = Math.max(most, open)
        await new Promise<void>((go) => gates.push(go))
        open--
        throw new RefusedError('NO_RESULT', 'none kept')
      },
    } as unknown as Actor
    const a = new OutputsArbiter({ actor, blobs, clock, log: silentLogger }, { maxConcurrent: 2 })
    const terms = (i: number) => ({ ...contract.terms, contractId: `c${i}` })
    const checks = [0, 1, 2, 3, 4].map((i) => a.check(terms(i), result.receipt))
    for (let done = 0; done < 5; done++) {
      while (gates.length === 0) await new Promise((r) => setImmediate(r))
      gates.shift()!()
    }
    assert.ok((await Promise.all(checks)).every((f) => f?.outcome === 'upheld'))
    assert.equal(most, 2)
  })
})
