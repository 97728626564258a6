/**
 * The dashboard in a real browser (Debian's chromium driven by playwright-core) against a real
 * devnet of separate processes (`dms devnet`: a contract-db, two providers, a requester with its
 * TCP listener). Signs in through `dms dashboard`'s one-time link, posts jobs from the form and
 * watches them live; anyone without a session gets the login page. Screenshots of each page go
 * to artefacts/dashboard/ (gitignored; DMS_ARTEFACTS moves them).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { chromiumPath, startDevnet, type DevnetReady } from '../helpers/devnet.js'

const exec = promisify(execFile)
const ARTEFACTS = process.env.DMS_ARTEFACTS ?? join('artefacts', 'dashboard')
const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
/** A DOM state the page must reach (generous: the machine may be loaded; no sleeps anywhere). */
const WAIT = { timeout: 45_000 }
/**
 * The page's `document`, for predicates passed to waitForFunction as functions. A function is
 * evaluated once and then polled; an expression string is evaluated again on each poll, and the
 * dashboard's CSP (no 'unsafe-eval') refuses that once the first check has failed.
 */
declare const document: { querySelector(selector: string): { textContent: string | null } | null }

describe('dashboard in chromium against a devnet', function () {
  this.timeout(120_000)
  let stopDevnet: (() => Promise<void>) | undefined
  let ready: DevnetReady
  let browser: Browser
  let context: BrowserContext
  let origin: string

  /** `dms dashboard --json` on the requester's socket: a fresh one-time link. */
  const loginLink = async (socket = ready.requester.socket) => {
    const { stdout } = await exec(process.execPath, ['bin/dms.js', 'dashboard', '--json', '--socket', socket])
    return (JSON.parse(stdout) as { url: string }).url
  }
  /** What the page's own writes send (specs/dashboard.md, "Writes from the page"): its session's write token. */
  const writeHeaders = async (page: Page) => ({
    'x-dms-write-token': (await page.getAttribute('meta[name="dms-write-token"]', 'content')) ?? '',
  })
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(ARTEFACTS, `${name}.png`), fullPage: true })

  before(async function () {
    assert.ok(existsSync('dist/dashboard/app.js'), 'the dashboard is not built: run `npm run build`')
    const executablePath = chromiumPath()
    await mkdir(ARTEFACTS, { recursive: true })
    const devnet = await startDevnet(2)
    ready = devnet.ready
    stopDevnet = devnet.stop
    origin = `http://${ready.requester.tcp}`
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  })

  after(async function () {
    await browser?.close()
    await stopDevnet?.()
  })

  it('without a session: the login page, no data; a used link does not sign in; CSP on every answer', async function () {
    const stranger = await browser.newContext()
    const page = await stranger.newPage()
    const res = await page.goto(`${origin}/dashboard/`)
    assert.equal(res?.status(), 401)
    await page.waitForSelector('#login')
    assert.equal(await page.$('#jobs'), null)
    const headers = res?.headers() ?? {}
    assert.match(headers['content-security-policy'], /script-src 'self'/)
    assert.match(headers['content-security-policy'], /frame-ancestors 'none'/)
    await shot(page, 'login')
    // The data routes answer 401 to the browser, with a wrong bearer token too.
    const data = await page.request.get(`${origin}/v1/jobs`, {
      headers: { authorization: `Bearer ${'0'.repeat(64)}` },
    })
    assert.equal(data.status(), 401)
    assert.match(data.headers()['content-security-policy'], /default-src 'none'/)

    const link = await loginLink()
    assert.equal((await page.goto(link))?.status(), 200, 'the first use signs in')
    await page.waitForSelector('#jobs')
    const other = await (await browser.newContext()).newPage()
    assert.equal((await other.goto(link))?.status(), 401, 'a second use does not')
    await other.waitForSelector('#login')
    await stranger.close()
    await other.context().close()
  })

  it('posts a job from the form (a refused field shown first), watches it complete live, shows bids, journey, logs, outputs', async function () {
    await (await context.newPage()).goto(await loginLink())
    const [cookie] = await context.cookies()
    assert.equal(cookie.name, `dms_session_${ready.requester.tcp.split(':').pop()}`)
    assert.equal(cookie.httpOnly, true)
    assert.equal(cookie.sameSite, 'Strict')

    // The list is open in its own tab while the job runs: its row arrives and changes live.
    const list = await context.newPage()
    await list.goto(`${origin}/dashboard/#/jobs`)
    await list.waitForSelector('#jobs')

    const page = await context.newPage()
    await page.goto(`${origin}/dashboard/#/new`)
    await page.fill('#f-name', 'from the form')
    await page.fill('#f-image', IMAGE)
    await page.fill('#f-command', 'sh\n-c\necho hello from the dashboard; echo -n 42 > /outputs/answer.txt')
    await page.fill('#f-cpu', '0.001')
    await page.click('#post-job')
    // Refused by the API's own check, shown at its field.
    await page.waitForSelector('.field-error[data-field="resources.cpu"]', WAIT)
    await page.fill('#f-cpu', '0.5')
    await page.click('#post-job')
    await page.waitForSelector('#job', WAIT)
    const id = page.url().split('#/jobs/')[1]
    assert.match(id, /^[0-9a-f-]{36}$/)

    await page.waitForSelector('#job[data-state="completed"]', WAIT)
    await list.waitForSelector(`#jobs tr[data-job="${id}"][data-state="completed"]`, WAIT)
    // The bids: both providers, ranked by score with their terms, the winner marked and explained.
    const rows = page.locator('#bids tbody tr')
    assert.equal(await rows.count(), 2)
    assert.match((await rows.nth(0).getAttribute('class')) ?? '', /winner/)
    assert.doesNotMatch((await rows.nth(1).getAttribute('class')) ?? '', /winner/)
    for (const score of await page.locator('#bids tbody td:nth-child(8)').allTextContents())
      assert.match(score, /^\d(\.\d+)?$/, 'a score')
    assert.match((await page.textContent('#why')) ?? '', /lowest score of 2 bids/)
    // The journey: the happy path, every state seen, in order.
    assert.deepEqual(await page.locator('#timeline tbody td:first-child').allTextContents(), [
      'bidding',
      'selecting',
      'contracting',
      'invoking',
      'running',
      'verifying',
      'settling',
      'completed',
    ])
    assert.equal(await page.locator('#timeline .diagram li.seen').count(), 8)
    // Logs, checks, outputs and settlement.
    await page.locator('#logs', { hasText: 'hello from the dashboard' }).waitFor(WAIT)
    assert.match((await page.textContent('#receipt-check')) ?? '', /checked/)
    assert.match((await page.textContent('#outputs-check')) ?? '', /checked/)
    assert.match((await page.textContent('#outputs')) ?? '', /answer\.txt/)
    const download = await page.request.get(`${origin}/v1/jobs/${id}/outputs/answer.txt`)
    assert.equal(await download.text(), '42', 'the download link serves the output (with the session cookie)')
    assert.match((await page.textContent('#settlement')) ?? '', /settled/)
    await shot(page, 'job')
    await page.screenshot({ path: join(ARTEFACTS, 'job-1280x800.png') }) // what the screen shows
    await shot(list, 'jobs')

    // Phone width: the page reflows, nothing sticks out sideways.
    await page.setViewportSize({ width: 390, height: 844 })
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'))
    assert.ok(overflow <= 0, `${overflow} px wider than the phone's screen`)
    await shot(page, 'job-phone')
    await page.close()
    await list.close()
  })

  it("shows a pod job's logs member by member", async function () {
    const page = await context.newPage()
    await page.goto(await loginLink())
    const member = (name: string) => ({
      name,
      image: IMAGE,
      command: ['sh', '-c', `echo from ${name}`],
      cpu: 0.25,
      memory: '32MiB',
    })
    const posted = await page.request.post(`${origin}/v1/jobs`, {
      headers: await writeHeaders(page),
      data: { name: 'a pod', members: [member('a'), member('b')], maxDuration: 60, maxPrice: 100_000 },
    })
    assert.equal(posted.status(), 201, await posted.text())
    const { id } = (await posted.json()) as { id: string }
    await page.goto(`${origin}/dashboard/#/jobs/${id}`)
    await page.waitForSelector('#job[data-state="completed"]', WAIT)
    await page.locator('#logs', { hasText: '==> member a <==' }).waitFor(WAIT)
    assert.equal(await page.textContent('#logs'), '==> member a <==\nfrom a\n==> member b <==\nfrom b\n')
    await shot(page, 'job-pod')
    await page.close()
  })

  it('cancels a running job from its page, after its first output streamed in live', async function () {
    const page = await context.newPage()
    await page.goto(`${origin}/dashboard/#/new`)
    await page.fill('#f-name', 'to cancel')
    await page.fill('#f-image', IMAGE)
    await page.fill('#f-command', 'sh\n-c\necho started; sleep 60')
    await page.fill('#f-maxDuration', '120')
    await page.click('#post-job')
    await page.waitForSelector('#job[data-state="running"]', WAIT)
    await page.locator('#logs', { hasText: 'started' }).waitFor(WAIT)
    await shot(page, 'job-running')
    await page.click('#cancel')
    await page.waitForSelector('#job[data-state="cancelled"]', WAIT)
    assert.equal(await page.$('#cancel'), null, 'no cancel button on an ended job')
    assert.doesNotMatch((await page.textContent('#job')) ?? '', /\byet\b/, 'an ended job says what happened')
    await shot(page, 'job-cancelled')
    await page.goto(`${origin}/dashboard/#/new`)
    await page.waitForSelector('#new-job')
    await shot(page, 'new-job')
    await page.close()
  })

  it('an ended job without a contract says why: no provider bid, nothing to settle, no outputs', async function () {
    const page = await context.newPage()
    await page.goto(`${origin}/dashboard/#/jobs`)
    await page.waitForSelector('#jobs')
    const posted = await page.request.post(`${origin}/v1/jobs`, {
      headers: await writeHeaders(page),
      // More cpu than either provider offers: both decline.
      data: {
        name: 'nobody can',
        image: IMAGE,
        command: ['sh', '-c', ':'],
        resources: { cpu: 512, memory: '32MiB' },
        maxDuration: 60,
        maxPrice: 100_000,
      },
    })
    assert.equal(posted.status(), 201, await posted.text())
    const { id } = (await posted.json()) as { id: string }
    await page.goto(`${origin}/dashboard/#/jobs/${id}`)
    await page.waitForSelector('#job[data-state="failed"]', WAIT)
    assert.match((await page.textContent('#job-error')) ?? '', /^NO_BIDS/)
    assert.equal(await page.textContent('#no-bids'), 'No bids: all 2 connected providers declined.')
    assert.equal(
      await page.textContent('#no-contract'),
      'No contract was made: no provider bid (2 declined).',
    )
    assert.match((await page.textContent('#no-settlement')) ?? '', /^Nothing to settle: no contract was made/)
    assert.match((await page.textContent('#outputs')) ?? '', /the job ended without a result/)
    await page.locator('#logs', { hasText: '(no output)' }).waitFor(WAIT)
    assert.doesNotMatch(
      (await page.textContent('#job')) ?? '',
      /\byet\b/,
      'nothing waits for what cannot come',
    )
    await shot(page, 'job-no-bids')
    await page.close()
  })

  it('the first paint is the node, not "Loading…": a plain headless chromium, and a browser with scripts off', async function () {
    // What a user's `chromium --headless --dump-dom <link>` (or --screenshot) captures: the page
    // as it stands at its load event, before the script has read anything.
    const { stdout } = await exec(chromiumPath(), [
      '--headless',
      '--no-sandbox',
      '--disable-dev-shm-usage',
      '--disable-gpu',
      '--dump-dom',
      await loginLink(),
    ])
    assert.doesNotMatch(stdout, /Loading…/)
    assert.match(stdout, /data-state="completed"[^]*from the form|from the form[^]*completed/)

    const noScript = await browser.newContext({
      javaScriptEnabled: false,
      viewport: { width: 1280, height: 800 },
    })
    const page = await noScript.newPage()
    assert.equal((await page.goto(await loginLink()))?.status(), 200)
    await page.waitForSelector('#summary')
    const rows = page.locator('#summary-jobs tbody tr')
    assert.ok((await rows.count()) >= 3)
    for (const [name, state] of [
      ['from the form', 'completed'],
      ['to cancel', 'cancelled'],
      ['nobody can', 'failed'],
    ])
      assert.equal(await rows.filter({ hasText: name }).getAttribute('data-state'), state)
    assert.match((await page.textContent('#summary')) ?? '', new RegExp(ready.requester.peerId))
    assert.match((await page.textContent('#summary')) ?? '', /The live pages need JavaScript/)
    assert.match((await page.textContent('#summary-network')) ?? '', /\/dms\/capacity\/1/)
    await shot(page, 'first-paint')
    await noScript.close()
  })

  it("a provider's page: the offer as a bar, an allocation live while it runs, then released; the network page", async function () {
    const provider = ready.providers[0]
    // The same browser: each listener names its own cookie, so both stay signed in.
    const page = await context.newPage()
    await page.goto(await loginLink(provider.socket))
    await page.waitForSelector('#provider')
    assert.equal(await page.$('#nav-jobs'), null, 'a provider-only node shows no requester pages')
    const cpu = page.locator('.bar-row[data-resource="cpu"]')
    await cpu.waitFor()
    const free = await cpu.locator('[data-part="free"]').boundingBox()
    const bar = await cpu.locator('.bar').boundingBox()
    assert.ok(free !== null && bar !== null && free.width > 0 && free.width <= bar.width)

    // A job only this provider may take, posted on the requester: its allocation row arrives
    // live, running with its usage and its share of the bar, then released once cancelled.
    const requester = await context.newPage()
    await requester.goto(`${origin}/dashboard/`)
    const write = await writeHeaders(requester)
    const posted = await requester.request.post(`${origin}/v1/jobs`, {
      headers: write,
      data: {
        name: 'for provider-a',
        image: IMAGE,
        command: ['sh', '-c', 'echo for a; sleep 60'],
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 120,
        maxPrice: 1000000,
        providers: { allow: [provider.peerId] },
      },
    })
    assert.equal(posted.status(), 201, await posted.text())
    const jobId = ((await posted.json()) as { id: string }).id
    const row = page.locator(`#allocations tr[data-job="${jobId}"]`)
    await page.waitForSelector(`#allocations tr[data-job="${jobId}"][data-state="running"]`, WAIT)
    await page.waitForFunction(
      (job) =>
        /^\d/.test(
          document.querySelector(`#allocations tr[data-job="${job}"] td:nth-child(7)`)?.textContent ?? '',
        ),
      jobId,
      WAIT,
    )
    const allocated = await cpu.locator('[data-part="allocated"]').boundingBox()
    assert.ok(allocated !== null && allocated.width > 0, 'the running job holds part of the cpu bar')
    await shot(page, 'provider-running')
    assert.equal(
      (await requester.request.delete(`${origin}/v1/jobs/${jobId}`, { headers: write })).status(),
      202,
    )
    await page.waitForSelector(`#allocations tr[data-job="${jobId}"][data-state="released"]`, WAIT)
    assert.match((await row.textContent()) ?? '', /released/)
    // Once released, the usage its receipt stated (cpu s, memory, wall s).
    const cell = async (n: number) => (await row.locator(`td:nth-child(${n})`).textContent()) ?? ''
    assert.match(await cell(5), /^\d+\.\d{2}$/, 'cpu seconds')
    assert.match(await cell(6), /^\d+ MiB$/, 'memory')
    assert.ok(Number(await cell(7)) > 0, 'wall seconds')
    // Earned and returned: two columns, filled once the contract-db's settlement is in the books.
    assert.deepEqual(await page.locator('#allocations th').allTextContents(), [
      'Allocation',
      'State',
      'Requester',
      'Started',
      'CPU s',
      'Memory',
      'Wall s',
      'Cost so far',
      'Payment',
      'Earned',
      'Returned',
    ])
    // The books: what this provider earned, and apart from it what went back to requesters.
    assert.match(
      (await page.textContent('#earnings')) ?? '',
      /Earned\d+Claimed\d+Returned to requesters\d+Outstanding\d+/,
    )
    await shot(page, 'provider')
    // The provider's first paint, scripts off: its books and the released allocation's usage.
    const noScript = await browser.newContext({ javaScriptEnabled: false })
    const plain = await noScript.newPage()
    await plain.goto(await loginLink(provider.socket))
    assert.match((await plain.textContent('#summary-provider')) ?? '', /Returned to requesters\d+/)
    const summaryRow = plain.locator(`#summary-provider tr[data-state="released"]`).first()
    assert.match((await summaryRow.locator('td:nth-child(5)').textContent()) ?? '', /^\d+\.\d{2}$/)
    await shot(plain, 'provider-first-paint')
    await noScript.close()

    // The requester's network: both providers connected, with their roles; the bid topic's peers.
    await requester.goto(`${origin}/dashboard/#/network`)
    await requester.waitForSelector('#peers')
    for (const p of ready.providers) {
      const row = requester.locator(`#peers tr[data-peer="${p.peerId}"]`)
      await row.waitFor(WAIT)
      assert.match((await row.textContent()) ?? '', /provider/)
    }
    await requester.waitForSelector('#topics tr[data-topic="/dms/bid-requests/1"]')
    // Every topic the node subscribes to, as the node says: /dms/capacity/1 too, which no
    // provider subscribes to.
    const topics = (await (await requester.request.get(`${origin}/v1/topics`)).json()) as {
      subscribed: string[]
    }
    assert.ok(topics.subscribed.includes('/dms/capacity/1'))
    for (const t of topics.subscribed)
      assert.equal(
        await requester.getAttribute(`#topics tr[data-topic="${t}"]`, 'data-subscribed'),
        'true',
        `${t} is shown as subscribed here`,
      )
    await shot(requester, 'network')
    await page.goto(`${origin}/dashboard/#/jobs`)
    await page.waitForSelector('#jobs')
    await page.close()
    await requester.close()
  })

  it("the contract-db operator's page: its own sign-in, accounts, contracts by state, a green conservation figure, live", async function () {
    const cdb = ready.contractDb
    const cdbOrigin = `http://${cdb.tcp}`
    const operator = (...args: string[]) =>
      exec(process.execPath, ['bin/dms.js', 'contract-db', ...args, '--data-dir', cdb.dataDir])
    // No data without a session: the node's session is not the contract-db's.
    const page = await context.newPage()
    const res = await page.goto(`${cdbOrigin}/dashboard/`)
    assert.equal(res?.status(), 401)
    await page.waitForSelector('#login')
    assert.match((await page.textContent('#login')) ?? '', /dms contract-db dashboard/)
    assert.match(res?.headers()['content-security-policy'] ?? '', /script-src 'self'/)
    assert.equal((await page.request.get(`${cdbOrigin}/v1/contract-db/overview`)).status(), 401)

    const { stdout } = await operator('dashboard', '--json')
    await page.goto((JSON.parse(stdout) as { url: string }).url)
    await page.waitForSelector('#operator')
    await page.waitForSelector('#conservation[data-ok="true"]')
    // The requester's account (credited by the devnet, paid for the jobs above) and its approval.
    const account = page.locator(`#accounts tr[data-peer="${ready.requester.peerId}"]`)
    await account.waitFor()
    assert.match((await account.textContent()) ?? '', /yes$/)
    for (const p of [ready.requester, ...ready.providers])
      await page.locator(`#approved tr[data-peer="${p.peerId}"]`).waitFor()
    // Contracts by state: the completed job settled; the counts are the table's rows.
    const count = async (state: string) =>
      Number(await page.textContent(`#by-state [data-state="${state}"] b`))
    assert.ok((await count('settled')) >= 1)
    let total = 0
    for (const s of ['active', 'settled', 'terminated', 'claimed', 'expired']) total += await count(s)
    assert.equal(await page.locator('#contracts tbody tr').count(), total)
    await shot(page, 'contract-db')
    // Its first paint, scripts off: the green figure and the contracts by state.
    const noScript = await browser.newContext({ javaScriptEnabled: false })
    const plain = await noScript.newPage()
    await plain.goto((JSON.parse((await operator('dashboard', '--json')).stdout) as { url: string }).url)
    assert.equal(await plain.getAttribute('#summary-conservation', 'data-ok'), 'true')
    assert.ok(Number(await plain.textContent('#summary-contracts [data-state="settled"] b')) >= 1)
    await shot(plain, 'contract-db-first-paint')
    await noScript.close()
    await page.setViewportSize({ width: 390, height: 844 })
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'))
    assert.ok(overflow <= 0, `${overflow} px wider than the phone's screen`)
    await shot(page, 'contract-db-phone')

    // Live: a credit by the operator's CLI shows up without a reload, and the books still add up.
    const before = (await page.textContent('#conservation .big')) ?? ''
    const balance = async () => (await account.locator('td:nth-child(2)').textContent()) ?? ''
    const was = await balance()
    await operator('credit', ready.requester.peerId, '1234567')
    await page.waitForFunction(
      (shown) => document.querySelector('#conservation .big')?.textContent !== shown,
      before,
    )
    assert.notEqual(await balance(), was)
    assert.equal(await page.getAttribute('#conservation', 'data-ok'), 'true')
    await page.close()
  })
})

describe('a provider priced per result: the CLI and the dashboard show its price', function () {
  this.timeout(120_000)
  const PRICE = 700
  let stopDevnet: (() => Promise<void>) | undefined
  let ready: DevnetReady
  let browser: Browser | undefined
  const dms = async (...args: string[]) => (await exec(process.execPath, ['bin/dms.js', ...args])).stdout

  before(async function () {
    const devnet = await startDevnet(1, ['--price-per-result', String(PRICE)])
    ready = devnet.ready
    stopDevnet = devnet.stop
    browser = await chromium.launch({
      executablePath: chromiumPath(),
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    })
  })
  after(async function () {
    await browser?.close()
    await stopDevnet?.()
  })

  it('quote, bids, contract and settlement say "700 per result"; the run is paid exactly that', async function () {
    const socket = ready.requester.socket
    const quote = await dms(
      'job',
      'quote',
      '--socket',
      socket,
      '--image',
      IMAGE,
      '--cpu',
      '0.5',
      '--',
      'sh',
      '-c',
      'echo hi',
    )
    assert.match(quote, new RegExp(`^1 +${ready.providers[0].peerId} +${PRICE} +${PRICE} per result `, 'm'))
    const posted = JSON.parse(
      await dms(
        'job',
        'run',
        '--socket',
        socket,
        '--json',
        '--image',
        IMAGE,
        '--cpu',
        '0.5',
        '--',
        'sh',
        '-c',
        'echo paid',
      ),
    ) as { id: string }
    // Signed in by the link in one tab, the job opened in another (as the tests above do): the
    // job page loaded in the sign-in tab raced the link's own redirect and never rendered.
    const context = await browser!.newContext()
    await (
      await context.newPage()
    ).goto((JSON.parse(await dms('dashboard', '--json', '--socket', socket)) as { url: string }).url)
    const page = await context.newPage()
    await page.goto(`http://${ready.requester.tcp}/dashboard/#/jobs/${posted.id}`)
    await page.waitForSelector('#job[data-state="completed"]', WAIT)
    assert.equal(await page.textContent('#bids tbody td.rate'), `${PRICE} per result`)
    assert.equal(await page.textContent('#bids tbody td:nth-child(3)'), String(PRICE), 'the total')
    await page.screenshot({ path: join(ARTEFACTS, 'per-result-bids.png'), fullPage: true })
    const shown = await dms('job', 'status', posted.id, '--socket', socket)
    assert.match(shown, new RegExp(`escrow ${PRICE}, price ${PRICE} per result`))
    assert.match(shown, new RegExp(`settled: paid ${PRICE}, refunded 0`))
  })
})
