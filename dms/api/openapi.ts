/**
 * A small OpenAPI 3.1 generator: every route registered on the API's Fastify instance is recorded
 * (an `onRoute` hook) with the same JSON schemas Fastify validates its params, query and body
 * with, plus the response documentation in the route's `config.doc`. Served at
 * `GET /v1/openapi.json` and committed as specs/openapi.json (scripts/check-openapi.sh).
 */
import type { FastifyInstance, RouteOptions } from 'fastify'
import { ErrorReply } from './schemas.js'

/** The dms version the API reports (`/v1/info`, the OpenAPI document). Keep in step with package.json. */
export const DMS_VERSION = '0.1.0'

/** What a route documents beyond its request schemas. Put it in the route's `config.doc`. */
export interface RouteDoc {
  summary: string
  description?: string
  /** Response status -> description, optional JSON schema, content type (default JSON). */
  responses?: Record<number, { description: string; schema?: object; contentType?: string }>
  /** Documents a JSON body the handler checks itself (not validated by Fastify). */
  body?: object
  /** Whether the request body is free-form bytes (not JSON): its content type. */
  rawBody?: string
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

function parameters(where: 'path' | 'query', schema: object | undefined): object[] {
  const s = schema as { properties?: Record<string, object>; required?: string[] } | undefined
  return Object.entries(s?.properties ?? {}).map(([name, sch]) => ({
    name,
    in: where,
    required: where === 'path' || (s?.required ?? []).includes(name),
    schema: sch,
  }))
}

/** The OpenAPI document of the recorded routes, in a stable order (path, then method). */
export function openApiDocument(routes: Recorded[], version: string): object {
  const paths: Record<string, Record<string, object>> = {}
  const sorted = [...routes].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method))
  for (const r of sorted) {
    const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    const pathParams = [...r.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1])
    const params =
      r.schema?.params !== undefined
        ? parameters('path', r.schema.params)
        : pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }))
    const responses: Record<string, object> = {}
    for (const [status, res] of Object.entries(r.doc?.responses ?? { 200: { description: 'OK' } })) {
      responses[status] = {
        description: res.description,
        ...(res.schema !== undefined || res.contentType !== undefined
          ? { content: { [res.contentType ?? 'application/json']: { schema: res.schema ?? {} } } }
          : {}),
      }
    }
    responses.default = {
      description: 'error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    }
    const op: Record<string, unknown> = {
      summary: r.doc?.summary ?? `${r.method} ${r.url}`,
      ...(r.doc?.description !== undefined ? { description: r.doc.description } : {}),
      parameters: [...params, ...parameters('query', r.schema?.querystring)],
      responses,
    }
    const body = r.schema?.body ?? r.doc?.body
    if (body !== undefined)
      op.requestBody = { required: true, content: { 'application/json': { schema: body } } }
    else if (r.doc?.rawBody !== undefined)
      op.requestBody = { required: true, content: { [r.doc.rawBody]: { schema: {} } } }
    ;(paths[path] ??= {})[r.method.toLowerCase()] = op
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'DMS node REST API',
      version,
      description:
        'The local API of a DMS node, on a unix socket (mode 0600) and optionally on TCP 127.0.0.1 with a bearer token. Generated from the route schemas (dms/api/openapi.ts); prose in specs/rest-api.md.',
    },
    components: {
      schemas: { Error: ErrorReply },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    },
    paths,
  }
}
