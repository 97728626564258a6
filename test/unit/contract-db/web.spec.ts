/**
 * The contract-db operator's dashboard listener over fake ports and real loopback TCP: a link
 * from the operator socket signs a browser in once; without a session there is the login page
 * and 401, never data; the strict CSP on every answer; the overview (a red conservation figure
 * when the port's books do not add up, in the page's first paint too); a `books` event after each change, streams bounded and
 * unsubscribed on close.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiClient } from '../../../dms/api/client.js'
import type { Conservation } from '../../../dms/contract-db/conservation.js'
import { OperatorApi, type OperatorPorts } from '../../../dms/contract-db/operator-api.js'
import type { ContractRecord } from '../../../dms/contract-db/records.js'
import type { BooksChange } from '../../../dms/contract-db/service.js'
import { OperatorWeb, type Overview } from '../../../dms/contract-db/web.js'
import { silentLogger } from '../../../dms/log.js'
import { WRITE_TOKEN_HEADER } from '../../../dms/web/csrf.js'
import { CSP, FIRST_PAINT_SLOT } from '../../../dms/web/pages.js'
import { makeContract, newParty } from '../../helpers/contracts.js'
import { closed, openStream, readUntil } from '../../helpers/event-stream.js'

describe('contract-db/web: the operator dashboard listener (from ports)', () => {
  let dir: string
  let web: OperatorWeb
  let api: OperatorApi
  const listeners = new Set<(w: BooksChange) => void>()
  const req = newParty()
  const prov = newParty()
  const contract = makeContract(req, prov, 'cdb', { pricePerHour: 3600, maxDurationSeconds: 60 })
  const record: ContractRecord = {
    contract,
    state: 'active',
    proof: { ...contract.terms, termsHash: 'h', escrowLocked: 60, issuedAt: 7, signature: 's' },
    activatedAt: 7,
    history: [{ state: 'active', at: 7 }],
  }
  // Books that do not add up: 10 more held than credited.
  const red: Conservation = {
    credited: 100,
    balances: 50,
    escrow: 60,
    difference: 10,
    ok: false,
    since: 1,
    initialisedWith: 0,
    accounts: 1,
  }
  const ports: OperatorPorts = {
    approvals: {
      list: () => Promise.resolve([{ peer: req.peer, approvedAt: 5 }]),
      approve: () => Promise.reject(new Error('not here')),
      revoke: () => Promise.resolve(false),
    },
    accounts: {
      list: () => Promise.resolve([{ peer: req.peer, balance: 50, escrow: 60 }]),
      get: (peer) => Promise.resolve({ peer, balance: 0, escrow: 0 }),
      credit: () => Promise.reject(new Error('not here')),
    },
    contracts: {
      page: () => Promise.resolve({ contracts: [record] }),
      counts: () => Promise.resolve({ [record.state]: 1 }),
      get: () => Promise.resolve(undefined),
    },
    identity: { peerId: () => 'cdb-peer', addrs: () => [], backend: () => 'level', instance: () => 'cdb-1' },
    metrics: { rejections: () => ({}), contentType: 'text/plain', render: () => Promise.resolve('') },
    log: silentLogger,
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-cdb-web-'))
    await writeFile(join(dir, 'operator.html'), `<!doctype html>${FIRST_PAINT_SLOT}<div id="app"></div>`)
    await writeFile(join(dir, 'operator.js'), 'export {}')
    web = new OperatorWeb(
      {
        ...ports,
        conservation: () => Promise.resolve(red),
        onChange: (fn) => (listeners.add(fn), () => void listeners.delete(fn)),
      },
      { port: 0, dir, max: 2 },
    )
    await web.start()
    const dashboard = {
      link: () => {
        const { code, expiresAt } = web.sessions.mintCode()
        return { url: `${web.origin}/dashboard/login?code=${code}`, expiresAt }
      },
    }
    api = new OperatorApi({ ...ports, dashboard }, { socketPath: join(dir, 'cdb.sock') })
    await api.start()
  })
  after(async () => {
    await api.stop()
    await web.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const at = (path: string, init: RequestInit = {}) =>
    fetch(`${web.origin}${path}`, { redirect: 'manual', ...init })
  const signIn = async (): Promise<string> => {
    const link = await new ApiClient(api.socketPath).ok<{ url: string }>('POST', '/v1/dashboard/login')
    const r = await at(link.url.replace(web.origin ?? '', ''))
    assert.equal(r.status, 303)
    return String(r.headers.get('set-cookie')).split(';')[0]
  }

  it('a link from the operator socket signs in once, as an HttpOnly SameSite=Strict cookie named after the port', async () => {
    const link = await new ApiClient(api.socketPath).ok<{ url: string }>('POST', '/v1/dashboard/login')
    assert.match(link.url, /^http:\/\/127\.0\.0\.1:\d+\/dashboard\/login\?code=[0-9a-f]{48}$/)
    const path = link.url.replace(web.origin ?? '', '')
    const first = await at(path)
    assert.equal(first.status, 303)
    const port = web.address?.split(':').pop()
    assert.match(
      String(first.headers.get('set-cookie')),
      new RegExp(`^dms_session_${port}=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=/`),
    )
    const again = await at(path)
    assert.equal(again.status, 401, 'a code is good once')
    assert.match(await again.text(), /dms contract-db dashboard/)
  })

  it('without a session (none, forged, signed out): the login page and 401, never data; CSP on every answer', async () => {
    const port = web.address?.split(':').pop()
    const signedOut = await signIn()
    const out = await at('/dashboard/logout', {
      method: 'POST',
      headers: { cookie: signedOut, [WRITE_TOKEN_HEADER]: web.sessions.writeToken(signedOut) ?? '' },
    })
    assert.equal(out.status, 303)
    const cases: Array<Record<string, string>> = [
      {},
      { cookie: `dms_session_${port}=${'a'.repeat(64)}` },
      { cookie: signedOut },
    ]
    for (const headers of cases) {
      const page = await at('/dashboard/', { headers })
      assert.equal(page.status, 401)
      const body = await page.text()
      assert.match(body, /Not signed in/)
      assert.match(body, /dms contract-db dashboard/)
      assert.doesNotMatch(body, /id="app"|id="summary|credited/)
      assert.equal(page.headers.get('content-security-policy'), CSP)
      for (const path of ['/v1/contract-db/overview', '/v1/events', '/v1/contract-db/accounts']) {
        const data = await at(path, { headers })
        assert.equal(data.status, 401, path)
        const text = await data.text()
        assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, 'UNAUTHORIZED')
        assert.doesNotMatch(text, new RegExp(req.peer))
        assert.equal(data.headers.get('content-security-policy'), CSP)
      }
    }
    // The page's script is public (code, no data); the node's bundle is not served here.
    assert.equal((await at('/dashboard/assets/operator.js')).status, 200)
    assert.equal((await at('/dashboard/assets/app.js')).status, 404)
  })

  it('signed in: the page and the overview, with a red conservation figure when the books do not add up', async () => {
    const cookie = await signIn()
    const page = await at('/dashboard/', { headers: { cookie } })
    assert.equal(page.status, 200)
    const html = await page.text()
    assert.match(html, /id="app"/)
    // Its first paint, before any script: the red figure, the contracts by state, the accounts.
    assert.match(html, /<section id="summary-conservation" class="figure broken" data-ok="false">/)
    assert.match(html, /✗ credited 100 ≠ balances 50 \+ escrow 60/)
    assert.match(html, /10 micro-tokens more than was ever credited/)
    assert.match(html, /data-state="active">active <b>1<\/b>/)
    assert.match(html, /1 accounts, 1 approved entities/)
    const r = await at('/v1/contract-db/overview', { headers: { cookie } })
    assert.equal(r.status, 200)
    const o = (await r.json()) as Overview
    assert.equal(o.peerId, 'cdb-peer')
    assert.deepEqual(o.byState, { active: 1 })
    assert.deepEqual(o.accounts, [{ peer: req.peer, balance: 50, escrow: 60 }])
    assert.deepEqual(o.approved, [{ peer: req.peer, approvedAt: 5 }])
    assert.equal(o.contracts[0].contractId, contract.terms.contractId)
    assert.deepEqual([o.conservation.ok, o.conservation.difference], [false, 10])
  })

  it('a books event after each change; streams bounded, unsubscribed on close and ended by stop', async () => {
    const cookie = await signIn()
    const { hostname, port } = new URL(web.origin ?? '')
    const open = () => openStream(hostname, port, '/v1/events', { cookie })
    const first = await open()
    assert.equal(first.statusCode, 200)
    assert.match(String(first.headers['content-type']), /^text\/event-stream/)
    assert.equal(first.headers['content-security-policy'], CSP)
    const until = readUntil(first)
    await until(': dms contract-db events')
    assert.equal(listeners.size, 1)
    for (const fn of listeners) fn('contract')
    await until('event: books\ndata: {"what":"contract"}\n\n')

    const second = await open()
    assert.equal(second.statusCode, 200)
    const over = await open()
    assert.equal(over.statusCode, 503)
    over.resume()
    await closed(second)
    while (listeners.size > 1) await new Promise((r) => setImmediate(r))
    // Stopping the listener ends a stream still open.
    const ended = new Promise<void>((resolve) => first.once('end', resolve).resume())
    await web.stop()
    await ended
    assert.equal(listeners.size, 0)
    await web.start()
  })
})
