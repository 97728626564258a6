/**
 * What the node's and the contract-db's dashboards share (specs/dashboard.md): the security
 * headers of every answer, the login page, and the sign-in, sign-out, page and asset routes (each
 * listener guards its writes with csrf.ts). The page files are built into `dist/dashboard/` by
 * `npm run build` and served from memory, the page with its session's write token filled in.
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { DashboardSessions } from './sessions.js'

/** Content-Security-Policy of every answer: own scripts, styles and connections only, no framing. */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** The types of the files a page may load, by extension. */
const TYPES: Record<string, string> = {
  js: 'application/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
}

/** `dist/dashboard/` of this package (from `dms/web/` in the sources or `dist/dms/web/` built). */
export function dashboardDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return join(dir, 'dist', 'dashboard')
}

/**
 * Where a page's HTML receives its session's write token (csrf.ts): the page reads it from this
 * tag and sends it with its writes. Only a same-origin page can read it.
 */
export const writeTokenMeta = (token: string) => `<meta name="dms-write-token" content="${token}" />`
const WRITE_TOKEN_SLOT = writeTokenMeta('')

/** Where a page's HTML receives its first paint (PageOptions.firstPaint). */
export const FIRST_PAINT_SLOT = '<div id="first-paint"></div>'
/** A first paint not ready by then is left out: the page is sent without it. */
export const FIRST_PAINT_TIMEOUT_MS = 2000

/** What anyone may fetch without signing in: the sign-in route and the pages' static code. */
export const isPublic = (url: string) =>
  url.startsWith('/dashboard/login') || /^\/dashboard\/assets\/[a-z-]+\.(js|css)$/.test(url)

/** Whether a URL is one of the dashboard's pages (a stranger gets the login page there). */
export const isPage = (url: string) => url === '/dashboard' || url.startsWith('/dashboard/')

/** Security headers on every answer (the JSON routes too: nothing here may be framed or sniffed). */
export function securityHeaders(app: FastifyInstance): void {
  // On request, not on send: a hijacked answer (an event stream) writes these too.
  app.addHook('onRequest', async (_req, rep) => {
    void rep
      .header('content-security-policy', CSP)
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store')
  })
}

/** The page shown to anyone not signed in: how to get a login link (`command`), and no data. */
export function loginPage(
  rep: FastifyReply,
  status: number,
  problem?: string,
  command = 'dms dashboard',
): FastifyReply {
  const note = problem === undefined ? '' : `<p class="error">${problem}</p>`
  return rep
    .status(status)
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" ` +
        `content="width=device-width,initial-scale=1"><title>DMS dashboard: sign in</title>` +
        `<link rel="stylesheet" href="/dashboard/assets/app.css"></head><body><main class="login" id="login">` +
        `<h1>DMS dashboard</h1>${note}<p>Not signed in. On this machine, run</p><pre>${command}</pre>` +
        `<p>and open the one-time link it prints (or run <code>${command} --open</code>).</p></main></body></html>`,
    )
}

export interface PageOptions {
  sessions: DashboardSessions
  /** The page's HTML file in `dir` (`index.html`: the node's; `operator.html`: the contract-db's). */
  page: string
  /** The files it may load from `/dashboard/assets/` (names in `dir`). */
  assets: readonly string[]
  /** The command that prints a login link, named on the login page. */
  command: string
  /** Where the built page lies. @default dashboardDir() */
  dir?: string
  /**
   * HTML put into the page's `<div id="first-paint">` for a signed-in browser: what it shows
   * before the page's script has its data, or without a script (specs/dashboard.md, "First
   * paint"). Left out when it fails or takes over FIRST_PAINT_TIMEOUT_MS. @default none
   */
  firstPaint?: () => Promise<string>
}

/** A route's OpenAPI description (dms/api/openapi.ts, `RouteDoc`): `open` needs no credential. */
const doc = (
  summary: string,
  responses: Record<number, { description: string; contentType?: string; schema?: object }>,
  more: { open?: boolean; operationId?: string } = {},
) => ({ doc: { summary, responses, ...more } })
const html = { contentType: 'text/html', schema: { type: 'string' } }

/** The sign-in (a one-time code for a session cookie), sign-out, the page and its assets. */
export function pageRoutes(app: FastifyInstance, o: PageOptions): void {
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

  app.get<{ Querystring: { code?: string } }>(
    '/dashboard/login',
    {
      schema: {
        querystring: Type.Object(
          { code: Type.Optional(Type.String({ maxLength: 200 })) },
          { additionalProperties: false },
        ),
      },
      config: doc(
        'exchanges a one-time login code for a session cookie, then shows the dashboard',
        {
          303: { description: 'signed in: to /dashboard/' },
          401: { description: 'the login page (code unknown, used or lapsed)', ...html },
        },
        { open: true },
      ),
    },
    async (req, rep) => {
      const s = req.query.code === undefined ? undefined : o.sessions.redeem(req.query.code)
      if (s === undefined)
        return loginPage(rep, 401, 'That login link is not valid (used, lapsed or mistyped).', o.command)
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
    {
      config: doc("ends the session (a write: needs the page's write token)", {
        303: { description: 'to the login page' },
        403: { description: "WRITE_TOKEN_INVALID or CROSS_ORIGIN: not from the dashboard's page" },
      }),
    },
    async (req, rep) => {
      o.sessions.end(req.headers.cookie)
      return rep
        .header('set-cookie', `${o.sessions.cookieName()}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`)
        .redirect('/dashboard/login', 303)
    },
  )

  const page = async (req: FastifyRequest, rep: FastifyReply) => {
    const html = await asset(o.page)
    if (html === undefined) return notBuilt(rep)
    const token = o.sessions.writeToken(req.headers.cookie) ?? ''
    const first = o.firstPaint === undefined ? '' : await withTimeout(o.firstPaint(), FIRST_PAINT_TIMEOUT_MS)
    return rep.type('text/html; charset=utf-8').send(
      html
        .toString('utf8')
        .replace(WRITE_TOKEN_SLOT, writeTokenMeta(token))
        .replace(FIRST_PAINT_SLOT, () => `<div id="first-paint">${first}</div>`),
    )
  }
  const pageDoc = doc('the dashboard page (signed in)', { 200: { description: 'the page', ...html } })
  const redirect = doc(
    'the dashboard page (signed in): redirects to /dashboard/',
    { 302: { description: 'to /dashboard/' } },
    { operationId: 'getDashboardRedirect' },
  )
  app.get('/dashboard', { config: redirect }, async (_req, rep) => rep.redirect('/dashboard/', 302))
  app.get('/dashboard/', { config: pageDoc }, page)

  app.get<{ Params: { name: string } }>(
    '/dashboard/assets/:name',
    {
      schema: { params: Type.Object({ name: Type.String({ maxLength: 32 }) }) },
      config: doc(
        "the dashboard's script and style (public: code, no data)",
        {
          200: { description: 'application/javascript or text/css' },
          404: { description: 'NOT_FOUND' },
        },
        { open: true },
      ),
    },
    async (req, rep) => {
      const name = req.params.name
      const type = o.assets.includes(name) ? TYPES[name.split('.').pop() ?? ''] : undefined
      if (type === undefined) return rep.status(404).send(webError('NOT_FOUND', 'no such asset'))
      const data = await asset(name)
      if (data === undefined) return notBuilt(rep)
      return rep.type(type).send(data)
    },
  )
}

/** What `p` gives within `ms`, else '' (also when it fails): a page is never held up by it. */
async function withTimeout(p: Promise<string>, ms: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(''), ms)
    timer.unref()
  })
  try {
    return await Promise.race([p.catch(() => ''), late])
  } finally {
    clearTimeout(timer)
  }
}

/** The JSON error shape of both APIs (`{ error: { code, message } }`). */
export const webError = (code: string, message: string) => ({ error: { code, message } })

function notBuilt(rep: FastifyReply): FastifyReply {
  return rep
    .status(503)
    .send(webError('DASHBOARD_NOT_BUILT', 'the dashboard is not built here: run `npm run build`'))
}
