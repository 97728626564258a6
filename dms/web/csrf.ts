/**
 * Writes from a browser (specs/dashboard.md, "Writes from the page"): a state-changing request
 * on a dashboard's listener must come from the dashboard's own page. The session cookie alone is
 * not enough: a page on another port of the same host is same-site, so the browser sends even a
 * SameSite=Strict cookie with its form posts. The page proves itself with its session's write
 * token in a header, which a form cannot set and a cross-origin fetch cannot send without a
 * preflight that these listeners never answer. An `Origin` naming another origin is refused too.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { DmsError } from '../../actors/errors.js'
import type { DashboardSessions } from './sessions.js'

/** The header the page sends its session's write token in. */
export const WRITE_TOKEN_HEADER = 'x-dms-write-token'

/** Methods that change nothing: served without a write token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** A state-changing request refused as not coming from the dashboard's page (403). */
export class WriteRefusedError extends DmsError {
  readonly statusCode = 403
  constructor(code: 'CROSS_ORIGIN' | 'WRITE_TOKEN_INVALID', message: string) {
    super(code, message)
  }
}

export interface WriteGuardOptions {
  sessions: DashboardSessions
  /** `http://host:port` of the listener: the only `Origin` a write may name. */
  origin: () => string | undefined
  /**
   * Whether the request carries the listener's bearer token: an API client, which needs no
   * write token (a browser cannot send the header cross-origin without a preflight).
   * @default () => false
   */
  bearer?: (req: FastifyRequest) => boolean
}

/** Why a request may not change anything here, or undefined when it may. */
export function writeRefusal(req: FastifyRequest, o: WriteGuardOptions): WriteRefusedError | undefined {
  if (SAFE_METHODS.has(req.method)) return undefined
  const from = req.headers.origin
  if (from !== undefined && from !== o.origin())
    return new WriteRefusedError('CROSS_ORIGIN', 'a write from a page of another origin is refused')
  if (o.bearer?.(req) === true) return undefined
  const token = req.headers[WRITE_TOKEN_HEADER]
  if (o.sessions.writeTokenMatches(req.headers.cookie, typeof token === 'string' ? token : undefined))
    return undefined
  return new WriteRefusedError(
    'WRITE_TOKEN_INVALID',
    `a write needs the bearer token, or a session and its page's ${WRITE_TOKEN_HEADER} header: reload the page`,
  )
}

/** Refuses (403) every state-changing request that `writeRefusal` refuses, before its body is read. */
export function guardWrites(app: FastifyInstance, o: WriteGuardOptions): void {
  app.addHook('onRequest', (req, _rep, done) => done(writeRefusal(req, o)))
}
