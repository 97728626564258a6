/**
 * Hostile outputs through the REST API, with real nodes and real Docker (security issue 13):
 * - a run whose /outputs hold names the collector cannot read is still billed, with its logs, and
 *   its receipt says what was skipped;
 * - a job without `disk` gets the provider's default quota, held in the ledger, and is stopped by
 *   it (and billed);
 * - outputs travel as files: neither node ever holds the archive whole in memory.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { ApiClient } from '../../dms/api/client.js'
import type { StoredJob } from '../../dms/orchestrator/orchestrator.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'
import { HOSTILE_OUTPUTS } from '../fixtures/hostile-outputs.js'
import { termsResources } from '../../dms/contracts/terms.js'

const MiB = 1024 * 1024
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex')
type Job = StoredJob['record'] & { state: string }

describe('hostile outputs (real nodes, real Docker)', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let api: ApiClient

  before(() => execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' }))
  afterEach(async () => net?.stop())

  const start = async (policy: { defaultDiskBytes?: number } = {}) => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1_000_000, policy }])
    api = new ApiClient(net.requester.socketPath!)
  }
  const post = (command: string[]) =>
    api.ok<{ id: string }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      command,
      resources: { cpu: 0.5, memory: '64MiB' }, // no disk: the provider's default quota applies
      maxDuration: 60,
      maxPrice: 1_000_000,
    })
  const finished = async (id: string): Promise<Job> => {
    await jobReaches(net.requester, id)
    return api.ok<Job>('GET', `/v1/jobs/${id}`)
  }

  it('bills a run whose outputs cannot all be read, keeps its logs, and says what was skipped', async function () {
    await start()
    const job = await finished((await post(['sh', '-c', HOSTILE_OUTPUTS])).id)
    const receipt = job.result!.receipt.receipt
    assert.equal(job.state, 'completed', JSON.stringify(job.error))
    assert.equal(receipt.status, 'completed')
    assert.equal(receipt.exitCode, 0)
    assert.ok(receipt.usage.wallSeconds > 0)
    assert.equal(job.result!.stdout, 'ran\n', 'the logs are kept')
    assert.equal(receipt.outputsSkipped?.count, 3)
    assert.match(receipt.outputsSkipped.detail, /name that is not UTF-8 \("bad\\xffname"\)/)
    assert.match(receipt.outputsSkipped.detail, /path too long to open/)
    assert.deepEqual(job.verification, { outputsHashOk: true, receiptSignatureOk: true })
    assert.equal(job.settlement?.outcome, 'settled')
    assert.ok(job.settlement.paidToProvider > 0, 'the provider is paid for what ran')
    const good = await api.raw('GET', `/v1/jobs/${job.id}/outputs/good.txt`)
    assert.equal(good.body.toString(), 'good\n')
  })

  it('gives a job without disk the default quota, holds it in the ledger, and stops it there (billed)', async function () {
    await start({ defaultDiskBytes: 16 * MiB })
    const script =
      'echo waiting; until [ -f /outputs/go ]; do sleep 0.1; done; dd if=/dev/zero of=/outputs/big bs=1M count=64'
    const orch = net.requester.orchestrator!
    let off = () => {}
    const waiting = new Promise<void>((resolve) => {
      off = orch.onLog((_, l) => {
        if (l.data.includes('waiting')) resolve()
      })
    })
    const { id } = await post(['sh', '-c', script])
    await waiting // the container runs
    off()
    const running = (await orch.get(id))!
    // The bid and the contract state the job's own resources; the ledger holds the quota.
    assert.equal(termsResources(running.record.contract!.terms).diskBytes, 0)
    const provider = net.providers[0]
    const held = provider.ledger!.entries()
    assert.deepEqual(
      held.map((e) => [e.state, e.resources.diskBytes]),
      [['allocated', 16 * MiB]],
    )
    assert.equal(provider.ledger!.summary().allocated.diskBytes, 16 * MiB)
    await writeFile(`${net.root}/provider-0/work/${running.record.allocationId}/outputs/go`, '')

    const job = await finished(id)
    const receipt = job.result!.receipt.receipt
    assert.equal(receipt.status, 'failed')
    assert.match(receipt.reason ?? '', /^disk quota exceeded \(16777216 bytes on \/outputs\); exit code 1$/)
    assert.match(job.result!.stderr, /No space left on device/)
    const big = job.result!.outputs.find((o) => o.path === 'big')
    assert.ok(big !== undefined && big.size <= 17 * MiB, `big is ${big?.size} bytes`)
    assert.equal(job.settlement?.outcome, 'settled')
    assert.ok(job.settlement.paidToProvider > 0, 'a run stopped by its quota is billed')
    assert.deepEqual(provider.ledger!.entries(), [], 'the quota is released with the run')
  })

  it('moves outputs as files: no whole-archive buffer on either node, and the API streams from disk', async function () {
    await start()
    const p = net.providers[0].blobs.store
    const r = net.requester.blobs.store
    // The whole-buffer paths of the blob store, taken away: a chunk read (offset + length) stays.
    p.put = () => Promise.reject(new Error('the provider buffered an archive'))
    const read = r.read.bind(r)
    r.read = (sha, offset, length) =>
      length === undefined
        ? Promise.reject(new Error('the requester read an archive whole'))
        : read(sha, offset, length)

    const job = await finished(
      (await post(['sh', '-c', 'head -c 3145728 /dev/urandom > /outputs/r.bin; echo hi > /outputs/hi'])).id,
    )
    assert.equal(job.state, 'completed', JSON.stringify(job.error ?? job.result?.receipt.receipt.reason))
    assert.deepEqual(job.verification, { outputsHashOk: true, receiptSignatureOk: true })
    const listed = Object.fromEntries(job.result!.outputs.map((o) => [o.path, o]))

    const tar = await api.raw('GET', `/v1/jobs/${job.id}/outputs.tar`)
    assert.equal(tar.status, 200)
    assert.equal(sha256(tar.body), job.result!.archive!.sha256)
    const file = await api.raw('GET', `/v1/jobs/${job.id}/outputs/r.bin`)
    assert.equal(file.status, 200)
    assert.equal(sha256(file.body), listed['r.bin'].sha256)
    assert.equal((await api.raw('GET', `/v1/jobs/${job.id}/outputs/hi`)).body.toString(), 'hi\n')
    assert.equal((await api.raw('GET', `/v1/jobs/${job.id}/outputs/nope`)).status, 404)
  })
})
