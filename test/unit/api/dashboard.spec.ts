/**
 * The dashboard's server side over fake ports: sign-in by one-time code (never the token in a
 * URL), the session cookie, the login page for anyone else, the security headers, and the event
 * stream (job and log events from the port's feeds, bounded, unsubscribed on close).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { CODE_TTL_MS, cookieNameFor, DashboardSessions, SESSION_TTL_MS } from '../../../dms/web/sessions.js'
import { WRITE_TOKEN_HEADER } from '../../../dms/web/csrf.js'
import { CSP } from '../../../dms/web/pages.js'
import { MAX_EVENT_STREAMS } from '../../../dms/api/events-routes.js'
import { detachedPorts } from '../../../dms/api/null-ports.js'
import type { ApiPorts, JobView } from '../../../dms/api/ports.js'
import { buildApi } from '../../../dms/api/server.js'
import { silentLogger } from '../../../dms/log.js'
import type { JobLog } from '../../../dms/protocol/messages.js'
import { closed, openStream, readUntil } from '../../helpers/event-stream.js'

const TOKEN = 't'.repeat(40)
const bearer = { authorization: `Bearer ${TOKEN}` }

/** Job feeds only: what the event stream reads. */
class Feeds {
  readonly changes = new Set<(j: JobView) => void>()
  readonly logs = new Set<(id: string, l: JobLog) => void>()
  readonly allocations = new Set<(id: string, state: string) => void>()
  readonly peers = new Set<(peerId: string, connected: boolean) => void>()
  ports(): Pick<ApiPorts, 'jobs' | 'allocations' | 'peers'> {
    const none = detachedPorts()
    return {
      jobs: {
        ...none.jobs,
        onChange: (fn) => (this.changes.add(fn), () => void this.changes.delete(fn)),
        onLog: (fn) => (this.logs.add(fn), () => void this.logs.delete(fn)),
      },
      allocations: {
        ...none.allocations,
        onChange: (fn) => (this.allocations.add(fn), () => void this.allocations.delete(fn)),
      },
      peers: { ...none.peers, onChange: (fn) => (this.peers.add(fn), () => void this.peers.delete(fn)) },
    }
  }
}

describe('dashboard: sign-in, headers and the event stream', () => {
  let dir: string
  let clock: ManualClock
  let feeds: Feeds
  let app: ReturnType<typeof buildApi>['app']
  let sessions: DashboardSessions

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-dashboard-'))
    await writeFile(join(dir, 'index.html'), '<!doctype html><div id="app"></div>')
    clock = new ManualClock()
    feeds = new Feeds()
    sessions = new DashboardSessions(clock, () => cookieNameFor('127.0.0.1:9'))
    app = buildApi(
      { ...detachedPorts(), ...feeds.ports() },
      { log: silentLogger },
      {
        token: TOKEN,
        sessions,
        origin: () => 'http://127.0.0.1:9',
        dashboardDir: dir,
      },
    ).app
  })
  afterEach(async () => {
    await app.close()
    await rm(dir, { recursive: true, force: true })
  })

  const login = async () => {
    const r = await app.inject({ method: 'POST', url: '/v1/dashboard/login', headers: bearer })
    assert.equal(r.statusCode, 200)
    return r.json<{ url: string; expiresAt: number }>()
  }
  const redeem = (url: string) => app.inject({ method: 'GET', url: url.replace('http://127.0.0.1:9', '') })

  it('a one-time code signs in once, as an HttpOnly SameSite=Strict cookie; the token is never in the link', async () => {
    assert.equal((await app.inject({ method: 'POST', url: '/v1/dashboard/login' })).statusCode, 401)
    const { url, expiresAt } = await login()
    assert.match(url, /^http:\/\/127\.0\.0\.1:9\/dashboard\/login\?code=[0-9a-f]{48}$/)
    assert.ok(!url.includes(TOKEN))
    assert.equal(expiresAt, clock.now() + CODE_TTL_MS)

    const r = await redeem(url)
    assert.equal(r.statusCode, 303)
    assert.equal(r.headers.location, '/dashboard/')
    const cookie = String(r.headers['set-cookie'])
    assert.match(cookie, /^dms_session_9=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=\//)
    const session = { cookie: cookie.split(';')[0] }
    assert.equal((await app.inject({ method: 'GET', url: '/v1/info', headers: session })).statusCode, 200)
    const page = await app.inject({ method: 'GET', url: '/dashboard/', headers: session })
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /id="app"/)

    const again = await redeem(url)
    assert.equal(again.statusCode, 401, 'a code is good once')
    assert.match(again.body, /Not signed in/)
    assert.equal(again.headers['set-cookie'], undefined)

    clock.advance(SESSION_TTL_MS)
    assert.equal((await app.inject({ method: 'GET', url: '/v1/info', headers: session })).statusCode, 401)
  })

  it('signing out ends the session on the server, not only in the browser', async () => {
    const r = await redeem((await login()).url)
    const session = { cookie: String(r.headers['set-cookie']).split(';')[0] }
    const token = sessions.writeToken(session.cookie) ?? ''
    const out = await app.inject({
      method: 'POST',
      url: '/dashboard/logout',
      headers: { ...session, [WRITE_TOKEN_HEADER]: token },
    })
    assert.equal(out.statusCode, 303)
    assert.match(String(out.headers['set-cookie']), /^dms_session_9=; .*Max-Age=0/)
    // The old cookie, replayed, is worth nothing.
    assert.equal((await app.inject({ method: 'GET', url: '/v1/info', headers: session })).statusCode, 401)
  })

  it('a lapsed or made-up code, a wrong token or a forged cookie gets the login page or 401, never data', async () => {
    const { url } = await login()
    clock.advance(CODE_TTL_MS)
    assert.equal((await redeem(url)).statusCode, 401, 'lapsed')
    assert.equal((await redeem(`/dashboard/login?code=${'a'.repeat(48)}`)).statusCode, 401)
    for (const headers of [
      {},
      { authorization: `Bearer ${'x'.repeat(40)}` },
      { cookie: `dms_session_9=${'a'.repeat(64)}` },
    ]) {
      const page = await app.inject({ method: 'GET', url: '/dashboard/', headers })
      assert.equal(page.statusCode, 401)
      assert.match(page.body, /Not signed in/)
      assert.doesNotMatch(page.body, /id="app"/)
      const data = await app.inject({ method: 'GET', url: '/v1/jobs', headers })
      assert.equal(data.statusCode, 401)
      assert.equal(data.json<{ error: { code: string } }>().error.code, 'UNAUTHORIZED')
      const events = await app.inject({ method: 'GET', url: '/v1/events', headers })
      assert.equal(events.statusCode, 401)
    }
    // The page's code and style are public (no data); anything else under /dashboard/ is not.
    assert.notEqual((await app.inject({ method: 'GET', url: '/dashboard/assets/app.css' })).statusCode, 401)
    assert.equal((await app.inject({ method: 'GET', url: '/dashboard/assets/../x' })).statusCode, 401)
  })

  it('every answer carries the strict CSP and refuses framing', async () => {
    for (const [url, headers] of [
      ['/v1/health', bearer],
      ['/v1/health', {}],
      ['/dashboard/', {}],
    ] as const) {
      const r = await app.inject({ method: 'GET', url, headers })
      assert.equal(r.headers['content-security-policy'], CSP, url)
      assert.equal(r.headers['x-frame-options'], 'DENY')
      assert.equal(r.headers['x-content-type-options'], 'nosniff')
    }
    assert.match(CSP, /script-src 'self';/)
    assert.match(CSP, /frame-ancestors 'none'/)
    assert.doesNotMatch(CSP, /unsafe-(inline|eval)/)
  })

  it('without a TCP listener there is no dashboard link: DASHBOARD_OFF', async () => {
    const bare = buildApi(detachedPorts(), { log: silentLogger }).app
    const r = await bare.inject({ method: 'POST', url: '/v1/dashboard/login' })
    assert.equal(r.statusCode, 409)
    assert.equal(r.json<{ error: { code: string } }>().error.code, 'DASHBOARD_OFF')
    await bare.close()
  })

  it('streams job and log events, at most MAX_EVENT_STREAMS at once, and unsubscribes on close', async () => {
    await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as AddressInfo
    const open = () => openStream('127.0.0.1', port, '/v1/events', bearer)
    const first = await open()
    assert.equal(first.statusCode, 200)
    assert.match(String(first.headers['content-type']), /^text\/event-stream/)
    assert.equal(first.headers['content-security-policy'], CSP)
    const until = readUntil(first)
    await until(': dms events')
    assert.equal(feeds.changes.size, 1)
    for (const fn of feeds.changes) fn({ state: 'running', record: { id: 'j1' } } as JobView)
    await until('event: job\ndata: {"id":"j1","state":"running"}\n\n')
    for (const fn of feeds.logs)
      fn('j1', { jobId: 'j1', allocationId: 'a', stream: 'stdout', seq: 0, data: 'hi\n' })
    await until('event: log\ndata: {"jobId":"j1","stream":"stdout","data":"hi\\n"}\n\n')
    // A pod member's piece names it.
    for (const fn of feeds.logs)
      fn('j1', { jobId: 'j1', allocationId: 'a', stream: 'stderr', seq: 1, data: 'x', member: 'b' })
    await until('event: log\ndata: {"jobId":"j1","stream":"stderr","data":"x","member":"b"}\n\n')
    for (const fn of feeds.allocations) fn('b1', 'running')
    await until('event: allocation\ndata: {"id":"b1","state":"running"}\n\n')
    for (const fn of feeds.peers) fn('P', false)
    await until('event: peer\ndata: {"peerId":"P","connected":false}\n\n')

    const more = await Promise.all(Array.from({ length: MAX_EVENT_STREAMS - 1 }, open))
    assert.ok(more.every((r) => r.statusCode === 200))
    const over = await open()
    assert.equal(over.statusCode, 503)
    over.resume()
    assert.equal(feeds.changes.size, MAX_EVENT_STREAMS)

    // Closing streams frees their slots and their subscriptions.
    await Promise.all([first, ...more].map(closed))
    while (feeds.changes.size > 0) await new Promise((r) => setImmediate(r))
    assert.equal(feeds.logs.size + feeds.allocations.size + feeds.peers.size, 0)
    const again = await open()
    assert.equal(again.statusCode, 200)
    // A stream still open does not hold the server's close (a node stopping with a page open).
    const ended = new Promise<void>((resolve) => again.once('end', resolve).resume())
    await app.close()
    await ended
  })
})
