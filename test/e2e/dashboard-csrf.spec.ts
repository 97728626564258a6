/**
 * A hostile page in the same browser as a signed-in dashboard (specs/dashboard.md, "Writes from
 * the page"): Debian's chromium, driven by playwright-core, signed in to a provider's dashboard
 * and to the contract-db's, opens a page served from another port of 127.0.0.1 (same-site, so
 * the SameSite=Strict cookie goes along). Its cross-origin forms (text/plain, urlencoded,
 * multipart) and fetches to pause, resume and sign out change nothing; the dashboards' own page
 * still writes, with its write token.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { ApiClient } from '../../dms/api/client.js'
import { chromiumPath, startDevnet, type DevnetReady } from '../helpers/devnet.js'

const exec = promisify(execFile)
const WAIT = { timeout: 45_000 }
/** What the functions evaluated in a page use of its `document`. */
declare const document: {
  querySelector(selector: string): { getAttribute(name: string): string | null } | null
}

const ENCTYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']

describe("dashboard: a page of another origin cannot drive a signed-in browser's dashboards", function () {
  this.timeout(120_000)
  let stopDevnet: (() => Promise<void>) | undefined
  let ready: DevnetReady
  let browser: Browser
  let context: BrowserContext
  let hostile: Server
  let hostileOrigin: string
  /** What the hostile server answers next, whatever the path. */
  let hostilePage = ''
  let provider: { origin: string; api: ApiClient; page: Page }
  let operator: { origin: string; page: Page }

  const mode = async () => (await provider.api.ok<{ mode: string }>('GET', '/v1/node/mode')).mode

  before(async function () {
    assert.ok(existsSync('dist/dashboard/app.js'), 'the dashboard is not built: run `npm run build`')
    const executablePath = chromiumPath()
    const devnet = await startDevnet(1)
    ready = devnet.ready
    stopDevnet = devnet.stop
    hostile = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end(hostilePage),
    )
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r))
    hostileOrigin = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
    context = await browser.newContext()

    // The browser signs in to both dashboards, each from its own one-time link.
    const p = ready.providers[0]
    const link = JSON.parse(
      (await exec(process.execPath, ['bin/dms.js', 'dashboard', '--json', '--socket', p.socket])).stdout,
    ) as { url: string }
    const page = await context.newPage()
    await page.goto(link.url)
    await page.waitForSelector('#provider', WAIT)
    provider = { origin: `http://${p.tcp}`, api: new ApiClient(p.socket), page }
    const cdb = JSON.parse(
      (
        await exec(process.execPath, [
          'bin/dms.js',
          'contract-db',
          'dashboard',
          '--json',
          '--data-dir',
          ready.contractDb.dataDir,
        ])
      ).stdout,
    ) as { url: string }
    const cdbPage = await context.newPage()
    await cdbPage.goto(cdb.url)
    await cdbPage.waitForSelector('#operator', WAIT)
    operator = { origin: `http://${ready.contractDb.tcp}`, page: cdbPage }
  })

  after(async function () {
    await browser?.close()
    hostile?.close()
    await stopDevnet?.()
  })

  /** Whether the browser's sessions still read data (the cookies it holds, as its pages would send them). */
  const signedIn = async () => ({
    provider: (await context.request.get(`${provider.origin}/v1/node/mode`)).status(),
    operator: (await context.request.get(`${operator.origin}/v1/contract-db/overview`)).status(),
  })

  /**
   * The hostile page's attempts on `target` (a POST route of a dashboard): a form of each
   * encoding, submitted and answered; a no-cors fetch (a simple request, answered opaquely); a
   * fetch with the write token's header (preflighted, never sent). Returns the forms' statuses.
   */
  const attack = async (target: string): Promise<number[]> => {
    const page = await context.newPage()
    const statuses: number[] = []
    for (const enctype of ENCTYPES) {
      hostilePage =
        `<!doctype html><form method="post" action="${target}" enctype="${enctype}">` +
        `<input name="a" value="b"><button id="go">go</button></form>`
      await page.goto(`${hostileOrigin}/form`)
      const [answer] = await Promise.all([page.waitForResponse(target, WAIT), page.click('#go')])
      statuses.push(answer.status())
    }
    hostilePage = '<!doctype html><p>nothing to see</p>'
    await page.goto(`${hostileOrigin}/fetch`)
    const got = await page.evaluate(async (url) => {
      const simple = await fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', body: '' })
      const preflighted = await fetch(url, {
        method: 'POST',
        credentials: 'include',
        headers: { 'x-dms-write-token': 'guess' },
      }).then(
        () => 'sent',
        () => 'refused',
      )
      return { simple: simple.type, preflighted }
    }, target)
    assert.deepEqual(got, { simple: 'opaque', preflighted: 'refused' })
    await page.close()
    return statuses
  }

  it('forms and fetches to pause and resume leave the mode as it was', async function () {
    assert.equal(await mode(), 'ready')
    const pause = await attack(`${provider.origin}/v1/node/pause`)
    assert.equal(await mode(), 'ready', 'a page of another origin paused the provider')
    assert.deepEqual(pause, [403, 403, 403])

    await provider.api.ok('POST', '/v1/node/pause') // the operator, on the socket
    const resume = await attack(`${provider.origin}/v1/node/resume`)
    assert.equal(await mode(), 'paused', 'a page of another origin resumed the provider')
    assert.deepEqual(resume, [403, 403, 403])
    await provider.api.ok('POST', '/v1/node/resume')
  })

  it("forms and fetches to sign out leave both dashboards' sessions live", async function () {
    assert.deepEqual(await signedIn(), { provider: 200, operator: 200 })
    await attack(`${provider.origin}/dashboard/logout`)
    await attack(`${operator.origin}/dashboard/logout`)
    assert.deepEqual(
      await signedIn(),
      { provider: 200, operator: 200 },
      'a page of another origin signed the browser out',
    )
  })

  it("the dashboards' own pages still write: with the page's write token, then the Sign out buttons", async function () {
    // What the page's api() does: the token from its HTML, in the header, from its own origin.
    const write = (path: string) =>
      provider.page.evaluate(async (p) => {
        const token = document.querySelector('meta[name="dms-write-token"]')?.getAttribute('content') ?? ''
        const r = await fetch(p, { method: 'POST', headers: { 'x-dms-write-token': token } })
        return r.status
      }, path)
    assert.equal(await write('/v1/node/pause'), 200)
    assert.equal(await mode(), 'paused')
    assert.equal(await write('/v1/node/resume'), 200)
    assert.equal(await mode(), 'ready')

    await provider.page.click('#sign-out')
    await provider.page.waitForSelector('#login', WAIT)
    await operator.page.click('#sign-out')
    await operator.page.waitForSelector('#login', WAIT)
    assert.deepEqual(await signedIn(), { provider: 401, operator: 401 })
  })
})
