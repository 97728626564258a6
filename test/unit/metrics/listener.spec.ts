/**
 * The metrics listener: `GET /metrics` to its own token and nothing else, loopback unless the
 * operator asks for more, its token generated once and kept (mode 0600).
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MetricsListener, type MetricsListenerConfig } from '../../../dms/metrics/listener.js'

const TEXT = 'dms_jobs{state="completed"} 1\n'
const source = {
  contentType: 'text/plain; version=0.0.4; charset=utf-8',
  render: () => Promise.resolve(TEXT),
}
const TOKEN = 'metrics-token-of-the-test-0123456789'

describe('metrics listener', () => {
  let dir: string
  const started: MetricsListener[] = []
  const listen = async (cfg: Partial<MetricsListenerConfig> = {}) => {
    const l = new MetricsListener(source, { port: 0, tokenPath: join(dir, 'metrics-token'), ...cfg })
    started.push(l)
    await l.start()
    return l
  }
  const get = (l: MetricsListener, path: string, init: RequestInit = {}) =>
    fetch(`http://${l.address}${path}`, init)
  const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } })

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-metrics-listener-'))
  })
  afterEach(async () => {
    for (const l of started.splice(0)) await l.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('serves the metrics to its token, on loopback', async () => {
    const l = await listen({ token: TOKEN })
    assert.match(l.address ?? '', /^127\.0\.0\.1:\d+$/)
    const res = await get(l, '/metrics', bearer(TOKEN))
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), source.contentType)
    assert.equal(await res.text(), TEXT)
  })

  it('refuses a scrape without the token, or with another one: 401 with WWW-Authenticate', async () => {
    const l = await listen({ token: TOKEN })
    for (const init of [{}, bearer('the-api-token-not-this-one-0123'), bearer(`${TOKEN}x`), bearer('')]) {
      const res = await get(l, '/metrics', init)
      assert.equal(res.status, 401)
      assert.equal(res.headers.get('www-authenticate'), 'Bearer')
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED')
    }
  })

  it('the metrics token reads the metrics and nothing else: no job is posted, listed or read', async () => {
    const l = await listen({ token: TOKEN })
    const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
    const tries: Array<[string, string, string?]> = [
      ['POST', '/v1/jobs', JSON.stringify({ image: 'busybox', command: ['sh', '-c', ':'] })],
      ['GET', '/v1/jobs'],
      ['GET', '/v1/jobs/7a0f0a8e-1a4e-4a40-9a43-2b8f9b0d2a11'],
      ['DELETE', '/v1/jobs/7a0f0a8e-1a4e-4a40-9a43-2b8f9b0d2a11'],
      ['POST', '/metrics', '{}'],
      ['GET', '/v1/info'],
    ]
    for (const [method, path, body] of tries) {
      const res = await get(l, path, { method, headers: auth, body })
      assert.equal(res.status, 404, `${method} ${path}`)
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'NOT_FOUND')
    }
  })

  it('generates a token into the data dir (mode 0600) once, and keeps it across restarts', async () => {
    const first = await listen()
    const kept = (await readFile(join(dir, 'metrics-token'), 'utf8')).trim()
    assert.equal(kept, first.token)
    assert.match(kept, /^[0-9a-f]{64}$/)
    assert.equal((await stat(join(dir, 'metrics-token'))).mode & 0o777, 0o600)
    await first.stop()
    const again = await listen()
    assert.equal(again.token, kept)
    assert.equal((await get(again, '/metrics', bearer(kept))).status, 200)
  })

  it('refuses an address beyond loopback unless public is set, and a host that is no IP address', async () => {
    await assert.rejects(listen({ host: '0.0.0.0' }), {
      name: 'MetricsListenerConfigError',
      code: 'METRICS_NOT_LOOPBACK',
    })
    await assert.rejects(listen({ host: '::' }), { code: 'METRICS_NOT_LOOPBACK' })
    await assert.rejects(listen({ host: 'localhost' }), { code: 'METRICS_BAD_HOST' })
    await assert.rejects(listen({ host: 'example.org' }), { code: 'METRICS_BAD_HOST' })
    const pub = await listen({ host: '0.0.0.0', public: true, token: TOKEN })
    assert.match(pub.address ?? '', /^0\.0\.0\.0:\d+$/)
    const port = pub.address?.split(':')[1]
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, bearer(TOKEN))
    assert.equal(res.status, 200)
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 401)
  })

  it("a port in use is named as the metrics listener's, and nothing is left listening", async () => {
    const first = await listen({ token: TOKEN })
    const port = Number(first.address?.split(':')[1])
    await assert.rejects(listen({ port, token: TOKEN }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'METRICS_CANNOT_LISTEN')
      assert.equal(err.message, `metrics: cannot listen on 127.0.0.1:${port}: address in use`)
      return true
    })
  })

  it('listens on ::1 when asked', async () => {
    const l = await listen({ host: '::1', token: TOKEN })
    assert.match(l.address ?? '', /^\[::1\]:\d+$/)
    assert.equal((await get(l, '/metrics', bearer(TOKEN))).status, 200)
  })
})
