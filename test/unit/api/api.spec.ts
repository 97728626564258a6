import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'node:http'
import { detachedPorts } from '../../../dms/api/null-ports.js'
import { buildApi } from '../../../dms/api/server.js'
import type { BlobService } from '../../../dms/blobs/service.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { BlobUploads } from '../../../dms/blobs/uploads.js'
import { ManualClock, systemClock } from '../../../actors/clock.js'
import { silentLogger } from '../../../dms/log.js'
import { blobsPort } from '../../../dms/node-adapters.js'
import { onboardRequestSchema } from '../../../dms/resources/onboard-request.js'

const errorOf = (r: { json: <T>() => T }) => r.json<{ error: { code: string; field?: string } }>().error

// A node with no roles: enough for the routes that do not reach the network.
const ports = detachedPorts()

describe('REST API framework: schemas, OpenAPI, errors, token', () => {
  it('generates an OpenAPI document from the same schemas the routes validate with', async () => {
    const { app, openapi } = buildApi(ports, { log: silentLogger })
    await app.ready()
    const doc = openapi() as {
      openapi: string
      paths: Record<
        string,
        Record<
          string,
          {
            parameters: Array<{ name: string; in: string }>
            requestBody?: { content: Record<string, { schema: unknown }> }
            responses: Record<string, unknown>
          }
        >
      >
    }
    assert.equal(doc.openapi, '3.1.0')
    for (const [path, method] of [
      ['/v1/health', 'get'],
      ['/v1/info', 'get'],
      ['/v1/peers', 'get'],
      ['/v1/allocations', 'get'],
      ['/metrics', 'get'],
      ['/v1/openapi.json', 'get'],
      ['/v1/jobs', 'get'],
      ['/v1/jobs', 'post'],
      ['/v1/jobs/{id}', 'get'],
      ['/v1/resources', 'get'],
      ['/v1/resources/offer', 'put'],
      ['/v1/resources/offer', 'delete'],
    ])
      assert.ok(doc.paths[path]?.[method], `${method} ${path} is not documented`)
    assert.equal(doc.paths['/v1/jobs/{id}'].get.parameters[0].in, 'path')
    assert.deepEqual(
      doc.paths['/v1/resources'].get.parameters.map((p) => [p.name, p.in]),
      [['refresh', 'query']],
    )
    assert.deepEqual(
      doc.paths['/v1/resources/offer'].put.requestBody?.content['application/json'].schema,
      JSON.parse(JSON.stringify(onboardRequestSchema)),
    )
    assert.ok(doc.paths['/v1/health'].get.responses.default, 'every operation documents the error shape')
    assert.equal(
      Object.keys(doc.paths).some((p) => p.includes(':')),
      false,
    )
    await app.close()
  })

  it('answers a schema failure and an unknown route with a stable code, message and field', async () => {
    const { app } = buildApi(ports, { log: silentLogger })
    const bad = await app.inject({ method: 'PUT', url: '/v1/resources/offer', payload: { cpu: 1, bogus: 2 } })
    assert.equal(bad.statusCode, 400)
    assert.deepEqual(bad.json(), {
      error: { code: 'INVALID_REQUEST', message: 'body: unknown field "bogus"', field: 'body' },
    })
    const query = await app.inject({ method: 'GET', url: '/v1/resources?refresh=maybe' })
    assert.equal(query.statusCode, 400)
    assert.equal(errorOf(query).field, 'querystring/refresh')
    // The router's own errors (before any route) keep the shape too.
    const long = await app.inject({ method: 'GET', url: `/v1/jobs/${'x'.repeat(200)}` })
    assert.equal(long.statusCode, 414)
    assert.equal(errorOf(long).code, 'FST_ERR_MAX_PARAM_LENGTH')
    const json = await app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: '{bad',
      headers: { 'content-type': 'application/json' },
    })
    assert.equal(json.statusCode, 400)
    assert.equal(errorOf(json).code, 'FST_ERR_CTP_INVALID_JSON_BODY')
    const none = await app.inject({ method: 'GET', url: '/v1/nope' })
    assert.equal(none.statusCode, 404)
    assert.deepEqual(none.json(), { error: { code: 'NOT_FOUND', message: 'no route GET /v1/nope' } })
    const notReq = await app.inject({ method: 'GET', url: '/v1/jobs' })
    assert.equal(notReq.statusCode, 409)
    assert.equal(errorOf(notReq).code, 'NOT_A_REQUESTER')
    const notProv = await app.inject({ method: 'GET', url: '/v1/allocations' })
    assert.equal(notProv.statusCode, 409)
    assert.equal(errorOf(notProv).code, 'NOT_A_PROVIDER')
    await app.close()
  })

  it('coerces query strings to their declared types but never bodies; refuses unknown fields in both', async () => {
    const { app, openapi } = buildApi(ports, { log: silentLogger })
    // A route added later the way other modules do (the data plane's `?follow=true`).
    app.get(
      '/v1/x/:id',
      {
        schema: {
          params: { type: 'object', properties: { id: { type: 'string' } } },
          querystring: {
            type: 'object',
            additionalProperties: false,
            properties: { follow: { type: 'boolean' } },
          },
        },
      },
      (req) => ({ follow: (req.query as { follow?: boolean }).follow }),
    )
    app.post(
      '/v1/x',
      {
        schema: {
          body: { type: 'object', additionalProperties: false, properties: { n: { type: 'integer' } } },
        },
      },
      (req) => req.body,
    )
    assert.deepEqual((await app.inject({ method: 'GET', url: '/v1/x/1?follow=true' })).json(), {
      follow: true,
    })
    const maybe = await app.inject({ method: 'GET', url: '/v1/x/1?follow=maybe' })
    assert.equal(maybe.statusCode, 400)
    assert.equal(errorOf(maybe).field, 'querystring/follow')
    const other = await app.inject({ method: 'GET', url: '/v1/x/1?other=1' })
    assert.equal(other.statusCode, 400)
    assert.equal(errorOf(other).code, 'INVALID_REQUEST')
    const text = await app.inject({ method: 'POST', url: '/v1/x', payload: { n: '1' } })
    assert.equal(text.statusCode, 400, 'a JSON body is not coerced')
    assert.equal(errorOf(text).field, 'body/n')
    assert.equal(
      (await app.inject({ method: 'POST', url: '/v1/x', payload: { n: 1, m: 2 } })).statusCode,
      400,
    )
    assert.deepEqual((await app.inject({ method: 'POST', url: '/v1/x', payload: { n: 1 } })).json(), { n: 1 })
    // ...and it is in the OpenAPI document without any extra step.
    const doc = openapi() as {
      paths: Record<string, { get?: { parameters: Array<{ name: string; in: string }> } }>
    }
    assert.deepEqual(
      doc.paths['/v1/x/{id}'].get?.parameters.map((p) => `${p.in}:${p.name}`),
      ['path:id', 'query:follow'],
    )
    await app.close()
  })

  it('with a token, refuses every request without the exact bearer token', async () => {
    const { app } = buildApi(ports, { log: silentLogger }, { token: 'a'.repeat(32) })
    for (const authorization of [
      undefined,
      `Bearer ${'a'.repeat(31)}`,
      `Bearer ${'a'.repeat(32)}x`,
      'a'.repeat(32),
    ]) {
      const r = await app.inject({
        method: 'GET',
        url: '/v1/health',
        headers: authorization ? { authorization } : {},
      })
      assert.equal(r.statusCode, 401, String(authorization))
      assert.equal(r.headers['www-authenticate'], 'Bearer')
      assert.equal(errorOf(r).code, 'UNAUTHORIZED')
    }
    const ok = await app.inject({
      method: 'GET',
      url: '/v1/health',
      headers: { authorization: `Bearer ${'a'.repeat(32)}` },
    })
    assert.equal(ok.statusCode, 200)
    // An unknown route is hidden behind the token too.
    assert.equal((await app.inject({ method: 'GET', url: '/v1/nope' })).statusCode, 401)
    await app.close()
  })
})

describe('REST API: blob uploads over the limit', () => {
  /** PUT /v1/blobs over a real socket, chunked (no content-length): the size is not known up front. */
  const upload = (socketPath: string, chunks: Buffer[]) =>
    new Promise<{ status: number; connection?: string; code: string }>((resolve, reject) => {
      const req = request(
        {
          socketPath,
          method: 'PUT',
          path: '/v1/blobs',
          headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          const got: Buffer[] = []
          res.on('data', (c: Buffer) => got.push(c))
          res.on('end', () => {
            const body = JSON.parse(Buffer.concat(got).toString()) as { error?: { code: string } }
            resolve({
              status: res.statusCode ?? 0,
              connection: res.headers.connection,
              code: body.error?.code ?? '',
            })
          })
        },
      )
      req.on('error', reject)
      for (const c of chunks) req.write(c)
      req.end()
    })

  it('answers 413 BLOB_TOO_LARGE when an undeclared body grows past the limit, keeping nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dms-api-blobs-'))
    const store = new BlobStore({ dir, maxBlobBytes: 1024 })
    await store.start()
    const blobs = blobsPort({ store } as BlobService, new BlobUploads({ store, clock: systemClock }))
    const { app } = buildApi({ ...ports, blobs }, { log: silentLogger })
    try {
      await app.listen({ path: join(dir, 'api.sock') })
      const over = await upload(join(dir, 'api.sock'), [Buffer.alloc(1000), Buffer.alloc(1000)])
      assert.deepEqual(over, { status: 413, connection: 'close', code: 'BLOB_TOO_LARGE' })
      assert.deepEqual(await readdir(join(dir, 'tmp')), [], 'the partial upload is removed')
      const ok = await upload(join(dir, 'api.sock'), [Buffer.alloc(1024)])
      assert.equal(ok.status, 201)
    } finally {
      await app.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  /** An upload that sends `first` and then nothing: its answer, and the request to end it. */
  function stalledUpload(socketPath: string, first: Buffer, length?: number) {
    let req: ReturnType<typeof request> | undefined
    const answer = new Promise<{ status: number; connection?: string; code: string }>((resolve, reject) => {
      req = request(
        {
          socketPath,
          method: 'PUT',
          path: '/v1/blobs',
          headers: {
            'content-type': 'application/octet-stream',
            ...(length !== undefined ? { 'content-length': length } : { 'transfer-encoding': 'chunked' }),
          },
        },
        (res) => {
          const got: Buffer[] = []
          res.on('data', (c: Buffer) => got.push(c))
          res.on('end', () => {
            const body = JSON.parse(Buffer.concat(got).toString()) as { error?: { code: string } }
            resolve({
              status: res.statusCode ?? 0,
              connection: res.headers.connection,
              code: body.error?.code ?? '',
            })
          })
        },
      )
      req.on('error', reject)
      req.write(first)
    })
    return { answer, req: () => req }
  }

  /** Resolves when `dir` holds a file of `bytes` bytes (the upload's temp file, written so far). */
  async function tempFileOf(dir: string, bytes: number): Promise<void> {
    for (let i = 0; i < 500; i++) {
      for (const f of await readdir(dir)) if ((await stat(join(dir, f))).size === bytes) return
      await new Promise((r) => setTimeout(r, 10))
    }
    throw new Error(`no temp file of ${bytes} bytes in ${dir}`)
  }

  it('drops an upload that sends nothing for uploadIdleMs: 408 UPLOAD_STALLED, its temp file removed (issue 29)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dms-api-blobs-'))
    const store = new BlobStore({ dir })
    await store.start()
    const clock = new ManualClock()
    const uploads = new BlobUploads({ store, clock }, { idleMs: 30_000 })
    const { app } = buildApi(
      { ...ports, blobs: blobsPort({ store } as BlobService, uploads) },
      { log: silentLogger },
    )
    await app.listen({ path: join(dir, 'api.sock') })
    const stalled = stalledUpload(join(dir, 'api.sock'), Buffer.alloc(5000))
    stalled.answer.catch(() => undefined)
    try {
      await tempFileOf(store.tmpDir, 5000)
      assert.equal(uploads.bytesInFlight, 5000)
      // Just short of the idle time, the upload is still open.
      await clock.advanceAsync(29_999)
      assert.deepEqual((await readdir(store.tmpDir)).length, 1)
      await clock.advanceAsync(1)
      const answer = await Promise.race([
        stalled.answer,
        new Promise((r) => setTimeout(() => r('no answer'), 3000)),
      ])
      assert.deepEqual(answer, { status: 408, connection: 'close', code: 'UPLOAD_STALLED' })
      assert.deepEqual(await readdir(store.tmpDir), [], 'the temp file is removed')
      assert.equal(uploads.bytesInFlight, 0)
    } finally {
      stalled.req()?.destroy()
      await app.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('bounds the temp bytes of the uploads in progress together: 503 UPLOADS_BUSY, nothing kept (issue 29)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dms-api-blobs-'))
    const store = new BlobStore({ dir })
    await store.start()
    const uploads = new BlobUploads({ store, clock: new ManualClock() }, { maxInFlightBytes: 8000 })
    const { app } = buildApi(
      { ...ports, blobs: blobsPort({ store } as BlobService, uploads) },
      { log: silentLogger },
    )
    const sock = join(dir, 'api.sock')
    await app.listen({ path: sock })
    const held = stalledUpload(sock, Buffer.alloc(5000))
    held.answer.catch(() => undefined)
    try {
      await tempFileOf(store.tmpDir, 5000)
      // Declared: refused before a byte is read.
      const big = stalledUpload(sock, Buffer.alloc(4000), 4000)
      assert.deepEqual(await big.answer, { status: 503, connection: 'close', code: 'UPLOADS_BUSY' })
      // Undeclared (chunked): refused when its bytes pass the budget.
      const chunked = await upload(sock, [Buffer.alloc(2000), Buffer.alloc(2000)])
      assert.deepEqual(chunked, { status: 503, connection: 'close', code: 'UPLOADS_BUSY' })
      assert.deepEqual((await readdir(store.tmpDir)).length, 1, 'only the upload in progress has a temp file')
      const fits = await upload(sock, [Buffer.alloc(2000)])
      assert.equal(fits.status, 201)
    } finally {
      held.req()?.destroy()
      await app.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
