/**
 * A client generated from specs/openapi.json (openapi-typescript's types, openapi-fetch) drives a
 * real requester (libp2p on 127.0.0.1, level, the contract-db, one provider whose run is a stand-in
 * that writes real outputs) over its TCP listener with the bearer token: upload, post, follow,
 * status, logs, outputs, one output file by a path with `/`, the archive, and the spec read back
 * posted again (test/helpers/openapi-client/round-trip.ts, compiled under --strict by
 * scripts/check-openapi.sh).
 */
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import createClient from 'openapi-fetch'
import type { ExecutionResult } from '../../../dms/executor/executor.js'
import { ArchiveExecutor } from '../../helpers/archive-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import type { paths } from '../../helpers/openapi-client/api.js'
import { roundTrip } from '../../helpers/openapi-client/round-trip.js'

const MiB = 1024 * 1024
const TOKEN = randomBytes(16).toString('hex')
const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex')

/** Outputs written for real, and a line on stdout. */
class SayingExecutor extends ArchiveExecutor {
  override async run(): Promise<ExecutionResult> {
    return { ...(await super.run()), stdout: 'hi\n' }
  }
}

describe('a generated OpenAPI client against a real requester (issue 35)', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let dir: string
  const files = [
    { path: 'answer.txt', content: Buffer.from('42') },
    { path: 'sub/dir/b.bin', content: randomBytes(4096) },
  ]

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-openapi-client-'))
    net = await startNetwork([{ cpu: 2, memoryBytes: 1024 * MiB, perCpuHour: 1000 }], {
      components: { executor: new SayingExecutor(dir, () => files) },
      requester: { bidWindowMs: 500 },
      nodes: { api: { tcp: { port: 0, token: TOKEN } } },
    })
  })
  after(async () => {
    await net?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const base = () => `http://${net.requester.apiTcpAddress!}`

  it('posts a job, follows it, reads its status, logs and outputs, and posts its spec again', async () => {
    const seen = await roundTrip(
      base(),
      TOKEN,
      {
        name: 'round trip',
        image: TEST_IMAGE,
        command: ['sh', '-c', 'echo hi'],
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 600,
        maxPrice: 1_000_000,
      },
      'an input',
    )
    assert.equal(seen.blob.sha256, sha('an input'))
    assert.deepEqual(seen.followed.at(-1), { end: true, state: 'completed' })
    assert.equal(seen.job.state, 'completed')
    assert.equal(seen.job.result?.stdout, 'hi\n')
    assert.deepEqual(seen.logs, { stdout: 'hi\n', stderr: '', truncated: false })
    assert.equal(seen.outputs.verified, true)
    assert.deepEqual(seen.outputs.files.map((f) => f.path).sort(), ['answer.txt', 'sub/dir/b.bin'])
    for (const f of seen.outputs.files) {
      const want = files.find((x) => x.path === f.path)!.content
      assert.equal(sha(seen.files[f.path]), sha(want), `${f.path}: the bytes of the file, read by its path`)
    }
    assert.equal(sha(seen.archive), seen.outputs.archive?.sha256, 'the archive as listed')
    // The spec read back was posted as it is: the new job has the same spec.
    assert.equal(seen.again.state, 'bidding')
    const again = await jobReaches(net.requester, seen.again.id)
    assert.equal(again.state, 'completed')
    assert.deepEqual(again.record.spec, seen.job.spec)
    assert.deepEqual(seen.job.postedSpec.inputs, [{ path: 'in.txt', sha256: sha('an input') }])
  })

  it('answers a call without the token 401 UNAUTHORIZED, typed as the error', async () => {
    const api = createClient<paths, 'application/json'>({ baseUrl: base() })
    const r = await api.GET('/v1/jobs/{id}', { params: { path: { id: 'x' } } })
    assert.equal(r.response.status, 401)
    assert.equal(r.error?.error.code, 'UNAUTHORIZED')
  })
})
