/**
 * The node's dashboard (specs/dashboard.md): the link route (`POST /v1/dashboard/login`) and the
 * page, its bundle and the sign-in shared with the contract-db's dashboard (dms/web/). The page
 * reads the same REST routes as the CLI.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { pageRoutes } from '../web/pages.js'
import { bearerMatches, type DashboardSessions } from '../web/sessions.js'
import { apiError } from './errors.js'
import type { RouteDoc } from './openapi.js'

export interface DashboardOptions {
  sessions: DashboardSessions
  /** The bearer token of this listener (undefined on the unix socket: no sign-in needed). */
  token?: string
  /** `http://host:port` of the TCP listener, once it listens (undefined: no TCP listener). */
  origin: () => string | undefined
  /** Where the built page lies (tests may point elsewhere). */
  dir?: string
  /** The page's first paint, rendered on the server (first-paint.ts). @default none */
  firstPaint?: () => Promise<string>
}

/** Whether a request may see pages and data: the socket, a bearer token or a live session. */
export function authorised(req: FastifyRequest, o: DashboardOptions): boolean {
  if (o.token === undefined) return true
  return bearerMatches(req.headers.authorization, o.token) || o.sessions.valid(req.headers.cookie)
}

const doc = (summary: string, responses: RouteDoc['responses']) => ({ doc: { summary, responses } })

const LoginReply = Type.Object({
  url: Type.String({ description: 'one-time login link: opening it signs a browser in' }),
  expiresAt: Type.Integer({ description: 'when the link lapses (ms since epoch)' }),
})

export function dashboardRoutes(app: FastifyInstance, o: DashboardOptions): Promise<void> {
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
  pageRoutes(app, {
    sessions: o.sessions,
    page: 'index.html',
    assets: ['app.js', 'app.css'],
    command: 'dms dashboard',
    dir: o.dir,
    firstPaint: o.firstPaint,
  })
  return Promise.resolve()
}
