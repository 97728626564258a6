/**
 * A small OpenAPI 3.1 generator: every route registered on the API's Fastify instance is recorded
 * (an `onRoute` hook) with the same JSON schemas Fastify validates its params, query and body
 * with, plus the response documentation in the route's `config.doc`. Served at
 * `GET /v1/openapi.json` and committed as specs/openapi.json (scripts/check-openapi.sh, which also
 * compiles a client generated from it: specs/rest-api.md, "OpenAPI").
 */
import type { FastifyInstance, RouteOptions } from 'fastify'
import { ErrorReply } from './schemas.js'

/** The dms version the API reports (`/v1/info`, the OpenAPI document). Keep in step with package.json. */
export const DMS_VERSION = '0.1.0'

/** Bytes, as a body or an answer (`application/octet-stream`, `application/x-tar`). */
export const BINARY = { type: 'string', format: 'binary' } as const

/** One documented answer of a route. */
export interface ResponseDoc {
  description: string
  /** Its JSON schema. @default the error shape (`Error`) for a status from 400 up, else none */
  schema?: object
  /** Its content type. @default 'application/json' */
  contentType?: string
  /**
   * More content types the same status answers with, and their schemas (e.g. an NDJSON stream
   * beside JSON: the schema of one line, as is usual before OpenAPI 3.2's `itemSchema`).
   */
  alsoAs?: Record<string, object>
}

/** What a route documents beyond its request schemas. Put it in the route's `config.doc`. */
export interface RouteDoc {
  summary: string
  description?: string
  /**
   * The operation's stable name in generated clients.
   * @default the method and the path's words (`GET /v1/jobs/:id` → `getJobsById`)
   */
  operationId?: string
  /** Response status -> what it answers. */
  responses?: Record<number, ResponseDoc>
  /** Documents a JSON body the handler checks itself (not validated by Fastify). */
  body?: object
  /** Whether the request body is free-form bytes (not JSON): its content type. */
  rawBody?: string
  /**
   * The role whose port answers the route: on a node without it, every call is 409
   * `NOT_A_REQUESTER` / `NOT_A_PROVIDER` (dms/api/null-ports.ts), declared for it.
   */
  role?: 'requester' | 'provider'
  /** Needs no credential on the TCP listener (the dashboard's login and assets). @default false */
  open?: boolean
  /** The name of the route's `*` (the rest of the path, `/` included). @default 'path' */
  wildcard?: string
}

interface Recorded {
  method: string
  url: string
  schema?: { params?: object; querystring?: object; body?: object }
  doc?: RouteDoc
}

const docOf = (config: unknown): RouteDoc | undefined => (config as { doc?: RouteDoc } | undefined)?.doc

/** Records routes as they are added. Call before any route is registered. */
export function recordRoutes(app: FastifyInstance): () => Recorded[] {
  const routes: Recorded[] = []
  app.addHook('onRoute', (r: RouteOptions) => {
    for (const method of [r.method].flat()) {
      if (method === 'HEAD') continue
      routes.push({
        method,
        url: r.url,
        schema: r.schema as Recorded['schema'],
        doc: docOf(r.config),
      })
    }
  })
  return () => routes
}

const ROLE_409 = {
  requester: 'NOT_A_REQUESTER: this node has no "requester" config section',
  provider: 'NOT_A_PROVIDER: this node has no "provider" config section',
}

const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }

/**
 * Named schemas (a TypeBox `$id`, e.g. `JobSpec`) moved to `components.schemas` and referred to,
 * so a generated client has one type for them wherever they appear (a job spec in a workflow).
 */
class Components {
  readonly schemas: Record<string, object> = { Error: ErrorReply }
  private readonly seen = new Map<string, string>()

  /** A copy of `schema` in which every named schema is a `$ref`. */
  hoist(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.hoist(s))
    if (typeof schema !== 'object' || schema === null) return schema
    const { $id, ...rest } = schema as Record<string, unknown>
    const copy = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, this.hoist(v)]))
    if (typeof $id !== 'string') return copy
    const text = JSON.stringify(copy)
    const before = this.seen.get($id)
    if (before !== undefined && before !== text) throw new Error(`two different schemas are named ${$id}`)
    this.seen.set($id, text)
    this.schemas[$id] = copy
    return { $ref: `#/components/schemas/${$id}` }
  }
}

function parameters(where: 'path' | 'query', schema: object | undefined, c: Components): object[] {
  const s = schema as { properties?: Record<string, object>; required?: string[] } | undefined
  return Object.entries(s?.properties ?? {}).map(([name, sch]) => ({
    name,
    in: where,
    required: where === 'path' || (s?.required ?? []).includes(name),
    schema: c.hoist(sch),
  }))
}

const capital = (w: string) => w.charAt(0).toUpperCase() + w.slice(1)

/** `GET /v1/jobs/{id}/outputs.tar` → `getJobsByIdOutputsTar`. */
function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((s) => s !== '' && s !== 'v1')
    .flatMap((s) => (s.startsWith('{') ? [`By${capital(s.slice(1, -1))}`] : s.split(/[^A-Za-z0-9]+/)))
    .filter((w) => w !== '')
  return method.toLowerCase() + words.map(capital).join('')
}

/** The OpenAPI document of the recorded routes, in a stable order (path, then method). */
export function openApiDocument(routes: Recorded[], version: string): object {
  const c = new Components()
  const paths: Record<string, Record<string, object>> = {}
  const ids = new Set<string>()
  const sorted = [...routes].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method))
  for (const r of sorted) {
    const wildcard = r.doc?.wildcard ?? 'path'
    const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, `{${wildcard}}`)
    const pathParams = [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1])
    const params =
      r.schema?.params !== undefined
        ? parameters('path', r.schema.params, c)
        : pathParams.map((name) => ({
            name,
            in: 'path',
            required: true,
            schema: { type: 'string' },
            ...(r.url.endsWith('*') && name === wildcard
              ? { description: 'the rest of the path: its `/` may be sent as is or as %2F' }
              : {}),
          }))
    const responses: Record<string, object> = {}
    const documented = { ...(r.doc?.responses ?? { 200: { description: 'OK' } }) }
    const role = r.doc?.role
    if (role !== undefined) {
      const other = documented[409]?.description
      documented[409] = {
        ...documented[409],
        description: other === undefined ? ROLE_409[role] : `${other}; ${ROLE_409[role]}`,
      }
    }
    for (const [status, res] of Object.entries(documented)) {
      const schema =
        res.schema ?? (Number(status) >= 400 ? { $ref: '#/components/schemas/Error' } : undefined)
      const content: Record<string, object> = {}
      if (schema !== undefined || res.contentType !== undefined)
        content[res.contentType ?? 'application/json'] = { schema: c.hoist(schema ?? {}) }
      for (const [type, s] of Object.entries(res.alsoAs ?? {})) content[type] = { schema: c.hoist(s) }
      responses[status] = {
        description: res.description,
        ...(Object.keys(content).length > 0 ? { content } : {}),
      }
    }
    responses.default = { description: 'error', content: errorContent }
    const operationId = r.doc?.operationId ?? operationIdOf(r.method, path)
    if (ids.has(operationId)) throw new Error(`two routes have the operationId ${operationId}`)
    ids.add(operationId)
    const op: Record<string, unknown> = {
      operationId,
      summary: r.doc?.summary ?? `${r.method} ${r.url}`,
      ...(r.doc?.description !== undefined ? { description: r.doc.description } : {}),
      parameters: [...params, ...parameters('query', r.schema?.querystring, c)],
      responses,
      // Open routes need nothing; the others the TCP listener's token (the unix socket: none).
      security: r.doc?.open === true ? [] : [{ bearer: [] }],
    }
    const body = r.schema?.body ?? r.doc?.body
    if (body !== undefined)
      op.requestBody = { required: true, content: { 'application/json': { schema: c.hoist(body) } } }
    else if (r.doc?.rawBody !== undefined)
      op.requestBody = { required: true, content: { [r.doc.rawBody]: { schema: BINARY } } }
    ;(paths[path] ??= {})[r.method.toLowerCase()] = op
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'DMS node REST API',
      version,
      description:
        'The local API of a DMS node, on a unix socket (mode 0600, no credential) and optionally on TCP 127.0.0.1 with a bearer token (the `api.tcp` config section; the token is `api.tcp.token` or the file <dataDir>/api-token). Generated from the route schemas (dms/api/openapi.ts); prose in specs/rest-api.md. A route of a role the node does not play answers 409 NOT_A_REQUESTER or NOT_A_PROVIDER.',
    },
    servers: [
      {
        url: 'http://127.0.0.1:{port}',
        description: "the node's TCP listener (`api.tcp`); the unix socket serves the same paths",
        variables: { port: { default: '8080', description: 'api.tcp.port' } },
      },
    ],
    security: [{ bearer: [] }],
    components: {
      schemas: c.schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'the TCP listener\'s token: "authorization: Bearer <api.tcp.token or <dataDir>/api-token>"',
        },
      },
    },
    paths,
  }
}
