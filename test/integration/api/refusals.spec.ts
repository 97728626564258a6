/**
 * Issue 13: what a real requester node's REST socket refuses up front. Specs the executor could
 * not run are 400 naming the field (and leave nothing stored); blob uploads over the limit are 413.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { request } from 'node:http'
import { ApiClient } from '../../../dms/api/client.js'
import { startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

type ErrorBody = { error: { code: string; message: string; field?: string } }

const valid = () => ({
  image: TEST_IMAGE,
  command: ['sh', '-c', ':'],
  resources: { cpu: 0.5, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 1000,
})

describe('REST API on a requester node: refusals', function () {
  this.timeout(30_000)
  let net: TestNetwork
  let api: ApiClient

  before(async () => {
    net = await startNetwork([])
    api = new ApiClient(net.requester.socketPath!)
  })
  after(async () => net?.stop())

  const refused = async (body: unknown, field: string, problem: RegExp) => {
    const res = await api.call<ErrorBody>('POST', '/v1/jobs', body)
    assert.equal(res.status, 400, JSON.stringify(res.body))
    assert.equal(res.body.error.code, 'INVALID_JOB_SPEC')
    assert.equal(res.body.error.field, field)
    assert.match(res.body.error.message, problem)
  }

  it('answers 400 naming the field for specs the executor could not run, and stores no job', async () => {
    await refused({ ...valid(), env: { 'A=B': '1' } }, 'env.A=B', /name must be letters/)
    await refused({ ...valid(), env: { 'A B': '1' } }, 'env.A B', /name must be letters/)
    await refused({ ...valid(), env: { 'A\u0000': '1' } }, 'env.A\u0000', /name must be letters/)
    await refused({ ...valid(), env: { A: 'x\u0000y' } }, 'env.A', /NUL/)
    await refused({ ...valid(), command: ['sh', '-c', 'echo \u0000'] }, 'command.2', /NUL/)
    await refused({ ...valid(), maxPrice: 2 ** 53 }, 'maxPrice', /must be <= 9007199254740991/)
    await refused({ ...valid(), resources: { cpu: 1e-10, memory: '64MiB' } }, 'resources.cpu', />= 0\.01/)
    for (const image of [
      'dms-test:1;rm -rf /',
      '$(id)',
      'DMS-TEST:1',
      '-dms-test',
      '../../containers/json',
      'a//b',
    ])
      await refused({ ...valid(), image }, 'image', /^image: /)
    await refused({ ...valid(), name: 'x\u001b[2Jy' }, 'name', /must match pattern/)
    assert.deepEqual(await net.requester.orchestrator!.list(), [])
  })

  it('keeps no inline input of a spec refused for a later input', async () => {
    const content = 'inline content of a refused spec'
    const sha = createHash('sha256').update(content).digest('hex')
    await refused(
      {
        ...valid(),
        inputs: [
          { path: 'a.txt', content },
          { path: 'b.bin', sha256: 'ab'.repeat(32) },
        ],
      },
      'inputs.1.sha256',
      /is not on this node/,
    )
    await refused(
      { ...valid(), resources: { ...valid().resources, disk: 4 }, inputs: [{ path: 'a.txt', content }] },
      'inputs',
      /more than the job's 4 bytes of disk/,
    )
    assert.equal(await net.requester.blobs.store.has(sha), false)
  })

  it('answers 413 to an upload that declares more than the limit, before reading it', async () => {
    const limit = net.requester.blobs.store.maxBlobBytes
    // Declares limit+1 bytes and sends 3: the answer comes without the rest ever being sent.
    const res = await new Promise<{ status: number; connection?: string; body: ErrorBody }>(
      (resolve, reject) => {
        const req = request(
          {
            socketPath: net.requester.socketPath,
            method: 'PUT',
            path: '/v1/blobs',
            headers: { 'content-type': 'application/octet-stream', 'content-length': limit + 1 },
          },
          (r) => {
            const chunks: Buffer[] = []
            r.on('data', (c: Buffer) => chunks.push(c))
            r.on('end', () =>
              resolve({
                status: r.statusCode ?? 0,
                connection: r.headers.connection,
                body: JSON.parse(Buffer.concat(chunks).toString()) as ErrorBody,
              }),
            )
          },
        )
        req.on('error', reject)
        req.write('abc')
      },
    )
    assert.equal(res.status, 413)
    assert.equal(res.connection, 'close', 'the rest of the body is not read')
    assert.equal(res.body.error.code, 'BLOB_TOO_LARGE')
    assert.match(res.body.error.message, new RegExp(`limit of ${limit} bytes`))
    // The node still takes a normal upload.
    const ok = await api.raw('PUT', '/v1/blobs', { body: Buffer.from('fine') })
    assert.equal(ok.status, 201)
  })
})
