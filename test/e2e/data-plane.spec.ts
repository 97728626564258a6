/**
 * The data plane with real nodes and real Docker: inputs as content-addressed blobs fetched by the
 * provider only when it lacks them, outputs as an archive fetched and checked by the requester,
 * and live logs streamed while the job runs.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { ApiClient } from '../../dms/api/client.js'
import type { StoredJob } from '../../dms/orchestrator/orchestrator.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'

const MiB = 1024 * 1024
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex')
type Job = StoredJob['record'] & { state: string }

describe('data plane: inputs, outputs and logs (real nodes, real Docker)', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let api: ApiClient

  before(() => execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' }))
  beforeEach(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }])
    api = new ApiClient(net.requester.socketPath!)
  })
  afterEach(async () => net?.stop())

  const post = (spec: Record<string, unknown>) =>
    api.ok<{ id: string }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      resources: { cpu: 0.5, memory: '64MiB', disk: '64MiB' },
      maxDuration: 60,
      maxPrice: 100_000,
      ...spec,
    })
  const finished = async (id: string): Promise<Job> => {
    await jobReaches(net.requester, id)
    return api.ok<Job>('GET', `/v1/jobs/${id}`)
  }

  it('stages inline and uploaded inputs, fetches only missing blobs, and returns checked outputs', async () => {
    const big = randomBytes(3 * MiB + 123) // more than one 1 MiB chunk
    const uploaded = await api.raw('PUT', '/v1/blobs', { body: big })
    assert.equal(uploaded.status, 201)
    const blob = JSON.parse(uploaded.body.toString()) as { sha256: string; size: number }
    assert.deepEqual(blob, { sha256: sha256(big), size: big.length })

    const inputs = [
      { path: 'a.txt', content: 'hello input\n' },
      { path: 'd/big.bin', sha256: blob.sha256 },
    ]
    const command = ['sh', '-c', 'cat /inputs/a.txt; cp /inputs/d/big.bin /outputs/copy.bin; ls -l /inputs/d']
    const first = await finished((await post({ command, inputs })).id)
    assert.equal(first.state, 'completed', JSON.stringify(first.error))
    assert.match(first.result!.stdout, /^hello input\n/)
    const staged = first.updates.find((u) => u.detail?.startsWith('inputs staged'))
    assert.match(staged?.detail ?? '', /2 files, 3145863 bytes \(2 blobs fetched, 0 cached\)/)
    // The stored job holds blob ids, not the inline content.
    assert.deepEqual(first.spec.inputs, [
      { path: 'a.txt', sha256: sha256('hello input\n'), size: 12 },
      { path: 'd/big.bin', sha256: blob.sha256, size: big.length },
    ])

    // The output came back as an archive, checked against the signed manifest.
    assert.deepEqual(first.verification, { outputsHashOk: true, receiptSignatureOk: true })
    const copy = await api.raw('GET', `/v1/jobs/${first.id}/outputs/copy.bin`)
    assert.equal(copy.status, 200)
    assert.equal(sha256(copy.body), blob.sha256, 'the output round-trips with a matching hash')
    // Fetched, so released: the provider deletes its copy of the archive (issue 29).
    const archive = first.result!.archive!.sha256
    for (let i = 0; i < 100 && (await net.providers[0].blobs.store.has(archive)); i++)
      await new Promise((r) => setTimeout(r, 50))
    assert.equal(await net.providers[0].blobs.store.has(archive), false, "the provider's archive is released")

    // A second job with the same inputs: the provider has them all.
    const second = await finished((await post({ command: ['cat', '/inputs/a.txt'], inputs })).id)
    assert.equal(second.state, 'completed', JSON.stringify(second.error))
    const again = second.updates.find((u) => u.detail?.startsWith('inputs staged'))
    assert.match(again?.detail ?? '', /\(0 blobs fetched, 2 cached\)/)
  })

  it('refuses an input blob this node does not have, naming the field', async () => {
    const res = await api.call<{ error: { code: string; field: string; message: string } }>(
      'POST',
      '/v1/jobs',
      {
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 100_000,
        inputs: [{ path: 'x', sha256: 'ab'.repeat(32) }],
      },
    )
    assert.equal(res.status, 400)
    assert.equal(res.body.error.field, 'inputs.0.sha256')
    assert.match(res.body.error.message, /upload it first with PUT \/v1\/blobs/)
  })

  it('a provider rejects a corrupted input blob and the job fails saying so', async () => {
    const data = randomBytes(4096)
    const id = await net.requester.blobs.store.put(data)
    // The requester's copy goes bad on disk after it was stored under its hash.
    await writeFile(net.requester.blobs.store.path(id), Buffer.alloc(4096, 1))
    const job = await finished((await post({ command: ['true'], inputs: [{ path: 'in', sha256: id }] })).id)
    assert.equal(job.state, 'failed')
    assert.equal(job.result?.receipt.receipt.status, 'failed')
    assert.match(
      job.result?.receipt.receipt.reason ?? '',
      new RegExp(`blob ${id} rejected: content hashes to`),
    )
    assert.equal(await net.providers[0].blobs.store.has(id), false, 'the provider kept nothing')
  })

  it('streams the logs live while the job runs, then ends with its state', async () => {
    const { id } = await post({
      command: ['sh', '-c', 'echo first; until [ -f /outputs/go ]; do sleep 0.1; done; echo second >&2'],
    })
    const lines: Array<{ stream?: string; data?: string; end?: boolean; state?: string }> = []
    let pending = ''
    let sawFirst!: () => void
    const first = new Promise<void>((r) => (sawFirst = r))
    const following = api.raw('GET', `/v1/jobs/${id}/logs?follow=true`, {
      onData: (chunk) => {
        pending += chunk.toString()
        let nl: number
        while ((nl = pending.indexOf('\n')) >= 0) {
          const line = JSON.parse(pending.slice(0, nl)) as (typeof lines)[number]
          pending = pending.slice(nl + 1)
          lines.push(line)
          if (line.data?.includes('first')) sawFirst()
        }
      },
    })
    await first
    // "first" arrived while the job was still running: it is live, not from the result.
    const running = await net.requester.orchestrator!.get(id)
    assert.ok(!['completed', 'failed'].includes(running!.state), `state ${running!.state}`)
    // Release the job: drop the file it waits for into its outputs folder on the provider.
    const work = `${net.root}/provider-0/work`
    const { allocationId } = (await net.requester.orchestrator!.get(id))!.record
    await writeFile(`${work}/${allocationId}/outputs/go`, '')
    const res = await following
    assert.equal(res.status, 200)
    assert.match(res.contentType, /application\/x-ndjson/)
    assert.deepEqual(lines.at(-1), { end: true, state: 'completed' })
    assert.equal(
      lines
        .filter((l) => l.stream === 'stdout')
        .map((l) => l.data)
        .join(''),
      'first\n',
    )
    assert.equal(
      lines
        .filter((l) => l.stream === 'stderr')
        .map((l) => l.data)
        .join(''),
      'second\n',
    )
    const logs = await api.ok<{ stdout: string; stderr: string }>('GET', `/v1/jobs/${id}/logs`)
    assert.deepEqual(logs, { stdout: 'first\n', stderr: 'second\n', truncated: false })
  })
})
