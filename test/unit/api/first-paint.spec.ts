/**
 * The dashboard's first paint over fake ports: the summary the server puts into the page (so a
 * browser shows something useful before, or without, the page's script), bounded, with every
 * value from outside escaped, a part that fails said so, and the page served with it.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FIRST_PAINT_CELL, FIRST_PAINT_ROWS, firstPaint } from '../../../dms/api/first-paint.js'
import { detachedPorts } from '../../../dms/api/null-ports.js'
import type { ApiPorts, JobView } from '../../../dms/api/ports.js'
import type { AllocationSummary } from '../../../dms/api/schemas.js'
import { buildApi } from '../../../dms/api/server.js'
import { silentLogger } from '../../../dms/log.js'
import { FIRST_PAINT_SLOT } from '../../../dms/web/pages.js'
import { jobRecord } from '../../helpers/steps.js'

const NOW = Date.UTC(2026, 10, 28, 10, 0, 0)
const HOSTILE = '</div><script>alert(1)</script><img src=x onerror=alert(2)>"\'&'
const PEER = '12D3KooWQYcAZh4cgbrBhfpQZsGY1JbQe1bwa8U4Ho2M6CdQFjLM'

const job = (id: string, state: string, name?: string): JobView => ({
  state,
  record: jobRecord({ id, createdAt: NOW - 90_000, spec: { ...jobRecord().spec, name } }),
})

const released: AllocationSummary = {
  allocationId: 'alloc-released-1',
  jobId: 'job-a',
  requester: PEER,
  state: 'released',
  history: [{ state: 'contracted', at: NOW - 60_000 }],
  usage: { cpuSeconds: 1.25, memoryBytes: 3 * 1024 * 1024, wallSeconds: 4.5 },
  payment: { escrow: 100, status: 'settled', paid: 30, refunded: 70 },
}

/** A requester and provider node with `jobs` and `allocations`; records what the jobs port was asked. */
function ports(jobs: JobView[], allocations: AllocationSummary[], over: Partial<ApiPorts> = {}) {
  const asked: Array<{ limit: number }> = []
  const none = detachedPorts()
  const p: ApiPorts = {
    ...none,
    info: {
      info: () => ({
        peerId: PEER,
        version: '0.0.0-test',
        roles: { requester: true, provider: true },
        mode: { mode: 'ready' },
        topics: { subscribed: ['/dms/bid-requests/1', '/dms/capacity/1'], known: [] },
      }),
    },
    jobs: {
      ...none.jobs,
      list: (q) => {
        asked.push({ limit: q.limit })
        return Promise.resolve({ jobs: jobs.slice(0, q.limit) })
      },
    },
    allocations: {
      list: () => Promise.resolve(allocations),
      earnings: () =>
        Promise.resolve({
          paid: 30,
          claimed: 0,
          refunded: 70,
          outstanding: 0,
          contracts: { settled: 1, claimed: 0, open: 0 },
          requesters: {},
        }),
    },
    peers: { list: () => Promise.resolve([]) },
    ...over,
  }
  return { ports: p, asked }
}

describe('dashboard first paint', () => {
  it('summarises the node: its newest jobs, its allocations with their usage, its books and topics', async () => {
    const { ports: p, asked } = ports(
      [job('j-2', 'failed', 'second'), job('j-1', 'completed', 'first')],
      [released],
    )
    const html = await firstPaint(p, NOW)
    assert.deepEqual(asked, [{ limit: FIRST_PAINT_ROWS }], 'one bounded page of jobs, never all')
    assert.match(html, /A summary as of 10:00:00 UTC/)
    assert.match(html, new RegExp(PEER))
    assert.match(html, /requester, provider/)
    assert.match(
      html,
      /<tr data-job="j-2" data-state="failed">.*second.*<\/tr><tr data-job="j-1" data-state="completed">/,
    )
    assert.match(html, /The newest 2: 1 failed · 1 completed/)
    // An ended allocation shows what its receipt stated; the books name whose money is whose.
    assert.match(html, /data-state="released">.*<td>1\.25<\/td><td>3 MiB<\/td><td>4\.5<\/td><td>30<\/td>/)
    assert.match(html, /<dt>Earned<\/dt><dd>30<\/dd>/)
    assert.match(html, /<dt>Returned to requesters<\/dt><dd>70<\/dd>/)
    assert.match(html, /<code>\/dms\/capacity\/1<\/code>/)
    assert.match(html, /<noscript>[^<]*JavaScript/)
  })

  it('escapes and cuts every value from outside: a hostile job name or error adds no markup', async () => {
    const long = 'n'.repeat(500)
    const hostile = { ...released, allocationId: HOSTILE, state: HOSTILE, requester: HOSTILE }
    const { ports: p } = ports([job('j-1', 'completed', HOSTILE), job('j-2', 'completed', long)], [hostile], {
      peers: { list: () => Promise.reject(new Error(HOSTILE)) },
    })
    const html = await firstPaint(p, NOW)
    assert.doesNotMatch(html, /<script|<img|onerror=alert\(2\)>/i)
    assert.match(html, /&lt;\/div&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
    assert.match(html, /&quot;&#39;&amp;/)
    assert.match(html, /Peers could not be read: &lt;\/div&gt;/)
    assert.ok(!html.includes(long), 'a long name is cut')
    assert.ok(html.includes(`${'n'.repeat(FIRST_PAINT_CELL - 1)}…`))
  })

  it('a part that cannot be read says so; the others are still shown', async () => {
    const { ports: p } = ports([job('j-1', 'completed', 'kept')], [], {
      allocations: {
        list: () => Promise.reject(new Error('the store is closed')),
        earnings: () => Promise.reject(new Error('x')),
      },
    })
    const html = await firstPaint(p, NOW)
    assert.match(html, /Allocations could not be read: the store is closed/)
    assert.match(html, /data-job="j-1"/)
  })

  it('a node without roles reads no role port', async () => {
    const none = detachedPorts()
    const html = await firstPaint(
      { ...none, info: { info: () => ({ peerId: PEER, roles: { requester: false, provider: false } }) } },
      NOW,
    )
    assert.match(html, /no role/)
    assert.doesNotMatch(html, /could not be read|summary-jobs|summary-provider/)
  })

  describe('the page', () => {
    let dir: string
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'dms-first-paint-'))
      await writeFile(
        join(dir, 'index.html'),
        `<!doctype html><body>${FIRST_PAINT_SLOT}<div id="app"></div></body>`,
      )
    })
    afterEach(() => rm(dir, { recursive: true, force: true }))

    it('GET /dashboard/ carries the summary in its HTML, before any script runs', async () => {
      const { ports: p } = ports([job('j-1', 'completed', 'on the page $& $1')], [released])
      const { app } = buildApi(p, { log: silentLogger }, { dashboardDir: dir })
      try {
        const page = await app.inject({ method: 'GET', url: '/dashboard/' })
        assert.equal(page.statusCode, 200)
        assert.match(
          page.body,
          /<div id="first-paint"><header>.*<tr data-job="j-1" data-state="completed">.*<\/div><div id="app"><\/div>/,
        )
        assert.ok(page.body.includes('on the page $&amp; $1'), 'a replacement pattern in a value is text')
      } finally {
        await app.close()
      }
    })
  })
})
