/**
 * The OpenAPI document as a generated client needs it (issue 35): typed bodies and reads by named
 * schemas, binary and stream answers declared, the one-file output path a real parameter, an
 * operationId and the bearer scheme on every operation, a server, and each role's 409 declared
 * where a node without the role answers it (probed on the null ports).
 */
import assert from 'node:assert/strict'
import { detachedPorts } from '../../../dms/api/null-ports.js'
import { buildApi } from '../../../dms/api/server.js'
import { silentLogger } from '../../../dms/log.js'

interface Op {
  operationId?: string
  security?: Array<Record<string, string[]>>
  parameters: Array<{ name: string; in: string }>
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> }
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>
}
interface Doc {
  servers?: Array<{ url: string }>
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, { scheme?: string }> }
  paths: Record<string, Record<string, Op>>
}

async function document(): Promise<{ doc: Doc; close: () => Promise<void> }> {
  const { app, openapi } = buildApi(detachedPorts(), { log: silentLogger })
  await app.ready()
  return { doc: JSON.parse(JSON.stringify(openapi())) as Doc, close: () => app.close() }
}

const ops = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  )
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const json = (op: Op, status: number | string) =>
  op.responses[String(status)]?.content?.['application/json']?.schema

describe('the OpenAPI document drives a generated client (issue 35)', () => {
  let doc: Doc
  let close: () => Promise<void>
  before(async () => ({ doc, close } = await document()))
  after(() => close())

  it('names every operation once and asks the bearer token of every one but the public pages', () => {
    const ids = ops(doc).map(({ op }) => op.operationId)
    assert.ok(
      ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id)),
      ids.join(' '),
    )
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique')
    assert.equal(doc.paths['/v1/jobs/{id}'].get.operationId, 'getJobsById')
    assert.equal(doc.components.securitySchemes.bearer.scheme, 'bearer')
    for (const { path, method, op } of ops(doc)) {
      const open = path.startsWith('/dashboard/login') || path.startsWith('/dashboard/assets/')
      assert.deepEqual(op.security, open ? [] : [{ bearer: [] }], `${method} ${path}`)
    }
    assert.match(doc.servers?.[0]?.url ?? '', /^http:\/\/127\.0\.0\.1:\{port\}$/)
  })

  it('types the job spec, workflow and reads by named schemas, and declares bytes and streams', () => {
    const p = doc.paths
    assert.deepEqual(p['/v1/jobs'].post.requestBody?.content['application/json'].schema, ref('JobSpec'))
    assert.deepEqual(p['/v1/quotes'].post.requestBody?.content['application/json'].schema, ref('JobSpec'))
    assert.deepEqual(p['/v1/workflows'].post.requestBody?.content['application/json'].schema, ref('Workflow'))
    assert.ok(JSON.stringify(doc.components.schemas.Workflow).includes('"#/components/schemas/JobSpec"'))
    assert.deepEqual(json(p['/v1/jobs/{id}'].get, 200), ref('Job'))
    const job = doc.components.schemas.Job as { properties: Record<string, unknown>; required: string[] }
    assert.deepEqual(job.properties.postedSpec, ref('JobSpec'), 'a job read back carries its spec as posted')
    assert.ok(job.required.includes('state') && job.required.includes('postedSpec'))
    assert.deepEqual(json(p['/v1/jobs/{id}/outputs'].get, 200), ref('Outputs'))
    assert.deepEqual(json(p['/v1/workflows/{id}'].get, 200), ref('WorkflowRecord'))
    assert.deepEqual(json(p['/v1/blobs'].put, 201), ref('Blob'))
    const logs = p['/v1/jobs/{id}/logs'].get.responses['200'].content!
    assert.deepEqual(logs['application/json'].schema, ref('Logs'))
    assert.deepEqual(logs['application/x-ndjson'].schema, ref('LogLine'), 'the schema of each line')
    const binary = { type: 'string', format: 'binary' }
    assert.deepEqual(p['/v1/blobs'].put.requestBody?.content['application/octet-stream'].schema, binary)
    assert.deepEqual(
      p['/v1/jobs/{id}/outputs.tar'].get.responses['200'].content?.['application/x-tar'].schema,
      binary,
    )
    assert.deepEqual(
      p['/v1/blobs/{sha256}'].get.responses['200'].content?.['application/octet-stream'].schema,
      binary,
    )
    assert.ok(p['/v1/events'].get.responses['200'].content?.['text/event-stream'])
    // Errors are typed too: every documented refusal is the error shape.
    assert.deepEqual(json(p['/v1/jobs/{id}'].get, 404), ref('Error'))
  })

  it('has no bare object schema (a generated client reads it as an empty object)', () => {
    const bare: string[] = []
    const walk = (v: unknown, at: string): void => {
      if (typeof v !== 'object' || v === null) return
      const o = v as Record<string, unknown>
      const open = o.additionalProperties ?? o.patternProperties
      if (o.type === 'object' && o.properties === undefined && open === undefined) bare.push(at)
      for (const [k, x] of Object.entries(o)) walk(x, `${at}/${k}`)
    }
    walk(doc, '#')
    assert.deepEqual(bare, [])
  })

  it('makes the one-file output path a path parameter (no literal *)', () => {
    assert.equal(
      Object.keys(doc.paths).some((p) => p.includes('*')),
      false,
    )
    const op = doc.paths['/v1/jobs/{id}/outputs/{path}'].get
    assert.deepEqual(
      op.parameters.map((x) => [x.name, x.in]),
      [
        ['id', 'path'],
        ['path', 'path'],
      ],
    )
    assert.ok(op.responses['200'].content?.['application/octet-stream'])
  })

  it("declares the role's 409 exactly where a node without the role answers it", async () => {
    const { app } = buildApi(detachedPorts(), { log: silentLogger })
    const sample: Record<string, string> = {
      id: 'x',
      sha256: '0'.repeat(64),
      task: 't',
      name: 'x',
      path: 'a/b',
    }
    try {
      for (const { path, method, op } of ops(doc)) {
        if (path.startsWith('/dashboard') || path === '/v1/events') continue
        const url = path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, n: string) => sample[n])
        const body =
          op.requestBody?.content['application/json'] !== undefined ? (BODIES[path] ?? {}) : undefined
        const r = await app.inject({
          method: method.toUpperCase() as 'GET',
          url,
          ...(body !== undefined ? { payload: body } : {}),
        })
        const code = r.statusCode === 409 ? r.json<{ error: { code: string } }>().error.code : undefined
        const role = code === 'NOT_A_REQUESTER' || code === 'NOT_A_PROVIDER' ? code : undefined
        const declared = op.responses['409']?.description ?? ''
        if (role !== undefined)
          assert.ok(declared.includes(role), `${method} ${path} answers ${role}: declare it`)
        else
          assert.ok(
            !/NOT_A_(REQUESTER|PROVIDER)/.test(declared),
            `${method} ${path} declares a role's 409 but answered ${r.statusCode} ${r.body}`,
          )
      }
    } finally {
      await app.close()
    }
  })
})

/** Bodies the routes' schemas take (so the probe reaches the port); any other body is `{}`. */
const BODIES: Record<string, object> = {
  '/v1/queues': { tag: 't' },
  '/v1/topics/subscribe': { topic: '/dms/capacity/1' },
  '/v1/topics/unsubscribe': { topic: '/dms/capacity/1' },
}
