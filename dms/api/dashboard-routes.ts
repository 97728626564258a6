/**
 * The dashboard's routes (specs/dashboard.md): the page and its bundle (built into
 * `dist/dashboard/` by `npm run build`, served from memory), the one-time-code sign-in and the
 * security headers every answer of the API carries. The page reads the same REST routes as the CLI.
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { bearerMatches, type DashboardSessions } from './dashboard-auth.js'
import { apiError } from './errors.js'
import type { RouteDoc } from './openapi.js'

/** Content-Security-Policy of every answer: own scripts, styles and connections only, no framing. */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** The files of the built page, by the name it is served under. */
const ASSETS: Record<string, string> = {
  'app.js': 'application/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
}

/** `dist/dashboard/` of this package (from `dms/api/` in the sources or `dist/dms/api/` built). */
export function dashboardDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return join(dir, 'dist', 'dashboard')
}

export interface DashboardOptions {
  sessions: DashboardSessions
  /** The bearer token of this listener (undefined on the unix socket: no sign-in needed). */
  token?: string
  /** `http://host:port` of the TCP listener, once it listens (undefined: no TCP listener). */
  origin: () => string | undefined
  /** Where the built page lies (tests may point elsewhere). */
  dir?: string
}

/** Whether a request may see pages and data: the socket, a bearer token or a live session. */
export function authorised(req: FastifyRequest, o: DashboardOptions): boolean {
  if (o.token === undefined) return true
  return bearerMatches(req.headers.authorization, o.token) || o.sessions.valid(req.headers.cookie)
}

/** What anyone may fetch without signing in: the sign-in route and the page's static code. */
export const isPublic = (url: string) =>
  url.startsWith('/dashboard/login') || /^\/dashboard\/assets\/[a-z.]+$/.test(url)

/** Security headers on every answer (the JSON routes too: nothing here may be framed or sniffed). */
export function securityHeaders(app: FastifyInstance): void {
  // On request, not on send: a hijacked answer (the event stream) writes these too.
  app.addHook('onRequest', async (_req, rep) => {
    void rep
      .header('content-security-policy', CSP)
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store')
  })
}

/** The page shown to anyone not signed in: how to get a login link, and no data. */
export function loginPage(rep: FastifyReply, status: number, problem?: string): FastifyReply {
  const note = problem === undefined ? '' : `<p class="error">${problem}</p>`
  return rep
    .status(status)
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" ` +
        `content="width=device-width,initial-scale=1"><title>DMS dashboard: sign in</title>` +
        `<link rel="stylesheet" href="/dashboard/assets/app.css"></head><body><main class="login" id="login">` +
        `<h1>DMS dashboard</h1>${note}<p>Not signed in. On this machine, run</p><pre>dms dashboard</pre>` +
        `<p>and open the one-time link it prints (or run <code>dms dashboard --open</code>).</p></main></body></html>`,
    )
}

const doc = (summary: string, responses: RouteDoc['responses']) => ({ doc: { summary, responses } })
const str = Type.String({ maxLength: 200 })

const LoginReply = Type.Object({
  url: Type.String({ description: 'one-time login link: opening it signs a browser in' }),
  expiresAt: Type.Integer({ description: 'when the link lapses (ms since epoch)' }),
})

export function dashboardRoutes(app: FastifyInstance, o: DashboardOptions): Promise<void> {
  const dir = o.dir ?? dashboardDir()
  const cache = new Map<string, Buffer>()
  const asset = async (name: string): Promise<Buffer | undefined> => {
    const hit = cache.get(name)
    if (hit !== undefined) return hit
    try {
      const data = await readFile(join(dir, name))
      cache.set(name, data)
      return data
    } catch {
      return undefined
    }
  }

  app.post(
    '/v1/dashboard/login',
    {
      config: doc('a one-time login link for the dashboard (specs/dashboard.md)', {
        200: { description: '{ url, expiresAt }', schema: LoginReply },
        409: { description: 'DASHBOARD_OFF: the node has no TCP listener (api.tcp)' },
      }),
    },
    async (_req, rep) => {
      const origin = o.origin()
      if (origin === undefined)
        return rep
          .status(409)
          .send(
            apiError(
              'DASHBOARD_OFF',
              'the dashboard is served on the API\'s TCP listener: set api.tcp (e.g. {"port": 0}) in the config',
            ),
          )
      const { code, expiresAt } = o.sessions.mintCode()
      return { url: `${origin}/dashboard/login?code=${code}`, expiresAt }
    },
  )

  app.get<{ Querystring: { code?: string } }>(
    '/dashboard/login',
    {
      schema: { querystring: Type.Object({ code: Type.Optional(str) }, { additionalProperties: false }) },
      config: doc('exchanges a one-time login code for a session cookie, then shows the dashboard', {
        303: { description: 'signed in: to /dashboard/' },
        401: { description: 'the login page (code unknown, used or lapsed)' },
      }),
    },
    async (req, rep) => {
      const s = req.query.code === undefined ? undefined : o.sessions.redeem(req.query.code)
      if (s === undefined)
        return loginPage(rep, 401, 'That login link is not valid (used, lapsed or mistyped).')
      return rep
        .header(
          'set-cookie',
          `${o.sessions.cookieName()}=${s.session}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${s.maxAgeSeconds}`,
        )
        .redirect('/dashboard/', 303)
    },
  )

  app.post(
    '/dashboard/logout',
    { config: doc('ends the session', { 303: { description: 'to the login page' } }) },
    async (req, rep) => {
      o.sessions.end(req.headers.cookie)
      return rep
        .header('set-cookie', `${o.sessions.cookieName()}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`)
        .redirect('/dashboard/login', 303)
    },
  )

  const page = async (_req: FastifyRequest, rep: FastifyReply) => {
    const html = await asset('index.html')
    if (html === undefined) return notBuilt(rep)
    return rep.type('text/html; charset=utf-8').send(html)
  }
  const pageDoc = doc('the dashboard page (signed in)', { 200: { description: 'text/html' } })
  app.get('/dashboard', { config: pageDoc }, async (_req, rep) => rep.redirect('/dashboard/', 302))
  app.get('/dashboard/', { config: pageDoc }, page)

  app.get<{ Params: { name: string } }>(
    '/dashboard/assets/:name',
    {
      schema: { params: Type.Object({ name: Type.String({ maxLength: 32 }) }) },
      config: doc("the dashboard's script and style (public: code, no data)", {
        200: { description: 'application/javascript or text/css' },
        404: { description: 'NOT_FOUND' },
      }),
    },
    async (req, rep) => {
      const type = ASSETS[req.params.name]
      const data = type === undefined ? undefined : await asset(req.params.name)
      if (type === undefined) return rep.status(404).send(apiError('NOT_FOUND', 'no such asset'))
      if (data === undefined) return notBuilt(rep)
      return rep.type(type).send(data)
    },
  )
  return Promise.resolve()
}

function notBuilt(rep: FastifyReply): FastifyReply {
  return rep
    .status(503)
    .send(apiError('DASHBOARD_NOT_BUILT', 'the dashboard is not built here: run `npm run build`'))
}
