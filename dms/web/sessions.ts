/**
 * The dashboards' sign-in (specs/dashboard.md, "Sign-in"; the node's and the contract-db's): one-time login codes, minted by an
 * authorised caller (`dms dashboard` on the unix socket, or a bearer-token holder), each exchanged
 * once for a session; the session travels as an HttpOnly, SameSite=Strict cookie. The bearer
 * token itself never appears in a URL. Codes and sessions live in memory: a restart signs out.
 * Each session has a write token (`writeToken`) that the page sends with its writes (csrf.ts).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { systemClock, type Clock } from '../../actors/clock.js'

export const SESSION_COOKIE = 'dms_session'

/**
 * The session cookie's name on a listener: browsers keep cookies by host, not port, so each
 * listener names its own (`dms_session_<port>`) and two nodes' dashboards on one host do not
 * sign each other out.
 */
export const cookieNameFor = (address: string | undefined): string => {
  const port = address === undefined ? undefined : /:(\d+)$/.exec(address)?.[1]
  return port === undefined ? SESSION_COOKIE : `${SESSION_COOKIE}_${port}`
}
/** A login code lives one minute and is good once. */
export const CODE_TTL_MS = 60_000
/** A session lives twelve hours from sign-in. */
export const SESSION_TTL_MS = 12 * 3600_000
/** At most this many unused codes and live sessions are kept (the oldest goes first). */
const MAX_CODES = 32
const MAX_SESSIONS = 64

/** Codes and sessions are kept by their sha256, so a memory dump holds no usable secret. */
const digest = (s: string) => createHash('sha256').update(s).digest('hex')

export class DashboardSessions {
  private readonly codes = new Map<string, number>()
  private readonly sessions = new Map<string, number>()
  // Write tokens are derived from the session id, so nothing more is stored; a new key per
  // process, like the sessions themselves.
  private readonly writeKey = randomBytes(32)

  constructor(
    private readonly clock: Clock = systemClock,
    /** The cookie's name (`cookieNameFor` the listener's address). */
    readonly cookieName: () => string = () => SESSION_COOKIE,
  ) {}

  /** A new one-time login code (hex) and when it lapses. */
  mintCode(): { code: string; expiresAt: number } {
    this.sweep()
    const code = randomBytes(24).toString('hex')
    const expiresAt = this.clock.now() + CODE_TTL_MS
    this.codes.set(digest(code), expiresAt)
    trim(this.codes, MAX_CODES)
    return { code, expiresAt }
  }

  /** Exchanges a code once: a new session id, or undefined (unknown, used or lapsed). */
  redeem(code: string): { session: string; maxAgeSeconds: number } | undefined {
    this.sweep()
    if (!/^[0-9a-f]{48}$/.test(code)) return undefined
    const key = digest(code)
    if (!this.codes.has(key)) return undefined
    this.codes.delete(key)
    const session = randomBytes(32).toString('hex')
    this.sessions.set(digest(session), this.clock.now() + SESSION_TTL_MS)
    trim(this.sessions, MAX_SESSIONS)
    return { session, maxAgeSeconds: SESSION_TTL_MS / 1000 }
  }

  /** True when the `cookie` header carries a live session. */
  valid(cookieHeader: string | undefined): boolean {
    const id = sessionOf(cookieHeader, this.cookieName())
    if (id === undefined) return false
    const until = this.sessions.get(digest(id))
    return until !== undefined && until > this.clock.now()
  }

  /**
   * The write token of the live session the `cookie` header carries (64 hex), or undefined. The
   * page is given it in its HTML and sends it back in a header (csrf.ts); a page of another
   * origin can neither read it nor guess it.
   */
  writeToken(cookieHeader: string | undefined): string | undefined {
    if (!this.valid(cookieHeader)) return undefined
    const id = sessionOf(cookieHeader, this.cookieName())
    return id === undefined ? undefined : createHmac('sha256', this.writeKey).update(id).digest('hex')
  }

  /** True when `token` is the write token of the live session the `cookie` header carries. */
  writeTokenMatches(cookieHeader: string | undefined, token: string | undefined): boolean {
    const expected = this.writeToken(cookieHeader)
    if (expected === undefined || token === undefined) return false
    const got = Buffer.from(token)
    return got.length === expected.length && timingSafeEqual(got, Buffer.from(expected))
  }

  /** Ends the session the `cookie` header carries, if any. */
  end(cookieHeader: string | undefined): void {
    const id = sessionOf(cookieHeader, this.cookieName())
    if (id !== undefined) this.sessions.delete(digest(id))
  }

  private sweep(): void {
    const now = this.clock.now()
    for (const m of [this.codes, this.sessions]) for (const [k, until] of m) if (until <= now) m.delete(k)
  }
}

/** Drops the oldest entries (insertion order) beyond `max`. */
function trim(m: Map<string, number>, max: number): void {
  for (const k of m.keys()) {
    if (m.size <= max) return
    m.delete(k)
  }
}

/** The session id in a `cookie` header, when it has the right shape. */
export function sessionOf(cookieHeader: string | undefined, cookie: string): string | undefined {
  if (cookieHeader === undefined || cookieHeader.length > 4096) return undefined
  for (const part of cookieHeader.split(';')) {
    const [name, value] = part.trim().split('=', 2)
    if (name === cookie && value !== undefined && /^[0-9a-f]{64}$/.test(value)) return value
  }
  return undefined
}

/** Constant-time check of an `authorization` header against `Bearer <token>`. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const expected = Buffer.from(`Bearer ${token}`)
  const got = Buffer.from(header ?? '')
  return got.length === expected.length && timingSafeEqual(got, expected)
}
