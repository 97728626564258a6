/**
 * Output archives at the provider (issue 29, item 8), on real nodes (libp2p on 127.0.0.1, level,
 * blob stores in temp dirs, the contract-db) with a test executor that writes a real archive in
 * place of Docker: a requester that fetched its outputs releases the provider's copy; one that
 * never does (outputs left at the provider, as a workflow's) has it deleted at the settlement plus
 * `outputsKeepMs` (time jumped), and kept until then.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import type { DmsNode } from '../../../dms/node.js'
import { JumpClock } from '../../helpers/jump-clock.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import { ArchiveExecutor } from '../../helpers/archive-executor.js'

const MiB = 1024 * 1024
const KEEP_MS = 3_600_000

async function until(what: string, test: () => Promise<boolean>, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50)))
    if (await test()) return
  assert.fail(`not within ${ms} ms: ${what}`)
}

describe('output archives at the provider are released (issue 29)', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let dir: string
  let clock: JumpClock
  let provider: DmsNode

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-kept-archives-'))
    clock = new JumpClock()
    net = await startNetwork(
      [{ cpu: 2, memoryBytes: 1024 * MiB, perCpuHour: 1000, policy: { outputsKeepMs: KEEP_MS } }],
      {
        components: {
          executor: new ArchiveExecutor(dir, () => [{ path: 'out.bin', content: randomBytes(256 * 1024) }]),
          clock,
        },
        requester: { bidWindowMs: 1000 },
      },
    )
    provider = net.providers[0]
  })
  afterEach(async () => {
    await net?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const post = (outputsStay?: boolean) =>
    net.requester.orchestrator!.post({
      ...parseJobSpec({
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 600,
        maxPrice: 1_000_000,
      }),
      ...(outputsStay === true ? { outputsStay } : {}),
    })

  /** Whether the provider still serves `sha256` to the requester (its grant is there). */
  const granted = async (sha256: string): Promise<boolean> => {
    try {
      await provider.blobs.serve(net.requester.peerId, { sha256, offset: 0, length: 1 })
      return true
    } catch (err) {
      if ((err as { code?: string }).code === 'BLOB_NOT_GRANTED') return false
      throw err
    }
  }

  it('a requester that fetched the archive releases it: the provider deletes its copy and the grant', async () => {
    const job = await jobReaches(net.requester, (await post()).record.id)
    assert.equal(job.state, 'completed')
    const sha256 = job.record.result!.archive!.sha256
    assert.ok(await net.requester.blobs.store.has(sha256), 'the requester has the archive')
    await until('the provider deleted the archive', async () => !(await provider.blobs.store.has(sha256)))
    assert.equal(await granted(sha256), false)
    assert.deepEqual(provider.provider!.archives.list(), [], 'no release deadline left')
  })

  it('an archive never released by its requester is kept until the settlement plus outputsKeepMs, then deleted', async () => {
    const job = await jobReaches(net.requester, (await post(true)).record.id)
    assert.equal(job.state, 'completed')
    const sha256 = job.record.result!.archive!.sha256
    assert.equal(await net.requester.blobs.store.has(sha256), false, 'left at the provider')
    await until('the provider kept the settlement', async () =>
      (await provider.provider!.books.list()).some((e) => e.settlement !== undefined),
    )
    const [kept] = provider.provider!.archives.list()
    assert.equal(kept.sha256, sha256)
    assert.equal(kept.releaseAt, (kept.settledAt as number) + KEEP_MS)
    clock.jump(KEEP_MS - 60_000)
    await new Promise((r) => setTimeout(r, 200))
    assert.ok(await provider.blobs.store.has(sha256), 'kept within the window')
    assert.equal(await granted(sha256), true)
    clock.jump(60_000)
    await until('the provider deleted the archive', async () => !(await provider.blobs.store.has(sha256)))
    assert.equal(await granted(sha256), false)
  })
})
