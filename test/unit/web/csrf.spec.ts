/**
 * Writes from a browser (dms/web/csrf.ts): on the node's TCP listener and on the contract-db's
 * dashboard listener, a session cookie alone changes nothing; the page's write token (in its
 * HTML, sent back in a header) does, from the listener's own origin only. The bearer token and
 * the unix socket need no write token.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { detachedPorts } from '../../../dms/api/null-ports.js'
import type { NodeModePort } from '../../../dms/api/ports.js'
import type { ModeView } from '../../../dms/api/schemas/provider.js'
import { buildApi } from '../../../dms/api/server.js'
import { OperatorWeb } from '../../../dms/contract-db/web.js'
import { silentLogger } from '../../../dms/log.js'
import { WRITE_TOKEN_HEADER } from '../../../dms/web/csrf.js'
import { writeTokenMeta } from '../../../dms/web/pages.js'
import { cookieNameFor, DashboardSessions } from '../../../dms/web/sessions.js'

const TOKEN = 't'.repeat(40)
const ORIGIN = 'http://127.0.0.1:9'
/** A page with the slot the server fills with the session's write token. */
const PAGE = `<!doctype html><head>${writeTokenMeta('')}</head><div id="app"></div>`
const tokenIn = (html: string) => /name="dms-write-token" content="([0-9a-f]*)"/.exec(html)?.[1]

/** A provider's mode that records every change asked of it. */
class Mode implements NodeModePort {
  mode: NonNullable<ModeView['mode']> = 'ready'
  readonly calls: string[] = []
  view = () => Promise.resolve({ mode: this.mode })
  pause = () => this.set('pause', 'paused')
  resume = () => this.set('resume', 'ready')
  drain = () => this.set('drain', 'draining')
  private set(call: string, mode: NonNullable<ModeView['mode']>) {
    this.calls.push(call)
    this.mode = mode
    return this.view()
  }
}

describe("web/csrf: a browser's writes need the page's write token", () => {
  let dir: string
  let mode: Mode
  let sessions: DashboardSessions
  let tcp: ReturnType<typeof buildApi>['app']
  let socket: ReturnType<typeof buildApi>['app']

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-csrf-'))
    await writeFile(join(dir, 'index.html'), PAGE)
    mode = new Mode()
    sessions = new DashboardSessions(new ManualClock(), () => cookieNameFor('127.0.0.1:9'))
    const opts = { sessions, origin: () => ORIGIN, dashboardDir: dir }
    const ports = { ...detachedPorts(), mode }
    tcp = buildApi(ports, { log: silentLogger }, { ...opts, token: TOKEN }).app
    socket = buildApi(ports, { log: silentLogger }, opts).app
  })
  afterEach(async () => {
    await tcp.close()
    await socket.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** A signed-in browser: its cookie and the write token its page was given. */
  const signIn = async () => {
    const r = await tcp.inject({ method: 'GET', url: `/dashboard/login?code=${sessions.mintCode().code}` })
    const cookie = String(r.headers['set-cookie']).split(';')[0]
    const page = await tcp.inject({ method: 'GET', url: '/dashboard/', headers: { cookie } })
    assert.equal(page.statusCode, 200)
    const token = tokenIn(page.body)
    assert.match(token ?? '', /^[0-9a-f]{64}$/, 'the page carries its write token')
    return { cookie, token: token ?? '' }
  }
  const codeOf = (r: { json: <T>() => T }) => r.json<{ error: { code: string } }>().error.code

  it("a session cookie alone, a wrong token or another session's token changes nothing: 403, the port never called", async () => {
    const { cookie } = await signIn()
    const other = await signIn()
    const attempts: Array<{ headers: Record<string, string>; payload?: string }> = [
      // What a cross-origin form sends: a simple request with the cookie and no header.
      { headers: { cookie, 'content-type': 'text/plain' }, payload: '' },
      { headers: { cookie, 'content-type': 'text/plain' }, payload: 'a=b' },
      { headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=b' },
      { headers: { cookie } },
      { headers: { cookie, [WRITE_TOKEN_HEADER]: '' } },
      { headers: { cookie, [WRITE_TOKEN_HEADER]: 'f'.repeat(64) } },
      { headers: { cookie, [WRITE_TOKEN_HEADER]: other.token } },
      { headers: { cookie, [WRITE_TOKEN_HEADER]: 'é'.repeat(32) } },
    ]
    for (const { headers, payload } of attempts)
      for (const url of ['/v1/node/pause', '/v1/node/resume', '/v1/node/drain']) {
        const r = await tcp.inject({ method: 'POST', url, headers, payload })
        assert.equal(r.statusCode, 403, `${url} ${JSON.stringify(headers)}`)
        assert.equal(codeOf(r), 'WRITE_TOKEN_INVALID')
      }
    // Other methods too, and the sign-out: the session lives on.
    for (const method of ['DELETE', 'PUT', 'PATCH'] as const)
      assert.equal((await tcp.inject({ method, url: '/v1/jobs/x', headers: { cookie } })).statusCode, 403)
    const out = await tcp.inject({ method: 'POST', url: '/dashboard/logout', headers: { cookie } })
    assert.equal(out.statusCode, 403)
    assert.equal(out.headers['set-cookie'], undefined)
    assert.deepEqual(mode.calls, [])
    assert.equal(
      (await tcp.inject({ method: 'GET', url: '/v1/node/mode', headers: { cookie } })).statusCode,
      200,
    )
  })

  it("the page's own token works, from its own origin only", async () => {
    const { cookie, token } = await signIn()
    const own = { cookie, [WRITE_TOKEN_HEADER]: token }
    const foreign = await tcp.inject({
      method: 'POST',
      url: '/v1/node/pause',
      headers: { ...own, origin: 'http://127.0.0.1:10' },
    })
    assert.equal(foreign.statusCode, 403)
    assert.equal(codeOf(foreign), 'CROSS_ORIGIN')
    assert.equal(
      (await tcp.inject({ method: 'POST', url: '/v1/node/pause', headers: { ...own, origin: 'null' } }))
        .statusCode,
      403,
    )
    assert.deepEqual(mode.calls, [])

    const paused = await tcp.inject({
      method: 'POST',
      url: '/v1/node/pause',
      headers: { ...own, origin: ORIGIN },
    })
    assert.equal(paused.statusCode, 200)
    assert.equal(paused.json<ModeView>().mode, 'paused')
    assert.equal((await tcp.inject({ method: 'POST', url: '/v1/node/resume', headers: own })).statusCode, 200)
    assert.deepEqual(mode.calls, ['pause', 'resume'])

    const out = await tcp.inject({
      method: 'POST',
      url: '/dashboard/logout',
      headers: { ...own, origin: ORIGIN },
    })
    assert.equal(out.statusCode, 303)
    assert.equal(
      (await tcp.inject({ method: 'GET', url: '/v1/node/mode', headers: { cookie } })).statusCode,
      401,
    )
    // A signed-out session's token is worth nothing.
    assert.equal((await tcp.inject({ method: 'POST', url: '/v1/node/pause', headers: own })).statusCode, 401)
    assert.equal(sessions.writeToken(cookie), undefined)
  })

  it('the bearer token and the unix socket need no write token; a foreign Origin is refused with the bearer token too', async () => {
    const bearer = { authorization: `Bearer ${TOKEN}` }
    assert.equal(
      (await tcp.inject({ method: 'POST', url: '/v1/node/pause', headers: bearer })).statusCode,
      200,
    )
    assert.equal((await socket.inject({ method: 'POST', url: '/v1/node/resume' })).statusCode, 200)
    assert.equal(
      (await tcp.inject({ method: 'POST', url: '/v1/dashboard/login', headers: bearer })).statusCode,
      200,
    )
    const foreign = await tcp.inject({
      method: 'POST',
      url: '/v1/node/pause',
      headers: { ...bearer, origin: 'http://127.0.0.1:10' },
    })
    assert.equal(foreign.statusCode, 403)
    assert.deepEqual(mode.calls, ['pause', 'resume'])
  })
})

describe("web/csrf: the contract-db's dashboard", () => {
  let dir: string
  let web: OperatorWeb

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-csrf-cdb-'))
    await writeFile(join(dir, 'operator.html'), PAGE)
    const none = () => Promise.reject(new Error('not here'))
    web = new OperatorWeb(
      {
        approvals: { list: none, approve: none, revoke: none },
        accounts: { list: none, get: none, credit: none },
        contracts: { page: none, counts: none, get: none },
        identity: { peerId: () => 'cdb', addrs: () => [], backend: () => 'level', instance: () => 'cdb-1' },
        conservation: none,
        onChange: () => () => undefined,
        log: silentLogger,
      },
      { port: 0, dir },
    )
    await web.start()
  })
  after(async () => {
    await web.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it("signs out only with the page's write token, from its own origin", async () => {
    const at = (path: string, init: RequestInit = {}) =>
      fetch(`${web.origin}${path}`, { redirect: 'manual', ...init })
    const r = await at(`/dashboard/login?code=${web.sessions.mintCode().code}`)
    const cookie = String(r.headers.get('set-cookie')).split(';')[0]
    const token = tokenIn(await (await at('/dashboard/', { headers: { cookie } })).text()) ?? ''
    assert.match(token, /^[0-9a-f]{64}$/)
    const logout = (headers: Record<string, string>) =>
      at('/dashboard/logout', { method: 'POST', headers: { cookie, ...headers }, body: '' })
    const attempts: Array<Record<string, string>> = [
      { 'content-type': 'text/plain' },
      { [WRITE_TOKEN_HEADER]: 'f'.repeat(64) },
      { [WRITE_TOKEN_HEADER]: token, origin: 'http://127.0.0.1:10' },
    ]
    for (const headers of attempts) {
      const out = await logout(headers)
      assert.equal(out.status, 403, JSON.stringify(headers))
      assert.equal(out.headers.get('set-cookie'), null)
    }
    assert.equal((await at('/dashboard/', { headers: { cookie } })).status, 200, 'still signed in')
    assert.equal((await logout({ [WRITE_TOKEN_HEADER]: token, origin: web.origin ?? '' })).status, 303)
    assert.equal((await at('/dashboard/', { headers: { cookie } })).status, 401, 'signed out')
  })
})
