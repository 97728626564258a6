/**
 * Workers and actions end to end (specs/functions.md): a worker (a shell script and a data file,
 * content addressed) is registered over REST with the needs dance; a batch of actions, one of them
 * repeated, runs as market jobs on a provider's process engine (bid, contract, escrow, receipt) in
 * the seed's file mode; each result comes back content addressed and checks against its hashes;
 * an action posted again once verified is a cache hit that posts no job.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ApiClient } from '../../dms/api/client.js'
import { jobReaches, startNetwork, type TestNetwork } from '../helpers/network.js'

const MiB = 1024 * 1024
const exec = promisify(execFile)
/** The built CLI's stdout (JSON) against the requester's socket. */
const dms = async (...args: string[]): Promise<unknown> =>
  JSON.parse((await exec(process.execPath, ['bin/dms.js', ...args, '--json'], { timeout: 30_000 })).stdout)
const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex')

// The worker: reads the action's build file and its Inputs folder, writes its outputs.
const RUN = [
  '#!/bin/sh',
  'set -e',
  'here=$(dirname "$0")',
  'test -f build.json',
  'cat Inputs/* | tr a-z A-Z > "$2/upper.txt"',
  'cat "$here/lib/suffix.txt" >> "$2/upper.txt"',
  'echo "$DMS_FUNCTION $DMS_FUNCTION_VERSION $(sha256sum build.json | cut -c1-64)" > "$2/meta.txt"',
  '',
].join('\n')
const SUFFIX = '!\n'

const descriptor = {
  name: 'upper',
  hostPlatform: 'linux',
  buildSystemVersion: 'bsv-1',
  executables: [{ path: 'run.sh', sha256: sha(RUN), size: Buffer.byteLength(RUN) }],
  files: [{ path: 'lib/suffix.txt', sha256: sha(SUFFIX), size: SUFFIX.length }],
  cores: 1,
  memoryBytes: 64 * MiB,
  timeout: 60,
  functions: [{ name: 'upper', version: '1.0' }],
}

interface ActionView {
  id: string
  state: string
  jobId: string
  jobs: string[]
  cached?: boolean
  outputs?: Array<{ path: string; sha256: string; size: number }>
  history?: Array<{ state: string; at: number; jobId?: string }>
}

describe('functions: workers, actions and the result cache (real market, process engine)', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let api: ApiClient

  before(async function () {
    net = await startNetwork(
      [
        {
          cpu: 2,
          memoryBytes: 1024 * MiB,
          diskBytes: 1024 * MiB,
          perCpuHour: 1000,
          policy: { engines: ['process'], process: { runtimes: ['/bin/sh'] } },
        },
      ],
      { requester: { bidWindowMs: 300, livenessTimeoutMs: 30_000 } },
    )
    api = new ApiClient(net.requester.socketPath!)
  })
  after(async function () {
    await net?.stop()
  })

  it('registers a worker with the needs dance, runs a batch of actions once each, then answers repeats from the cache', async function () {
    // The needs dance: the first post lists what the node lacks; nothing is registered yet.
    const first = await api.call<{ id: string; registered: boolean; needs: Array<{ sha256: string }> }>(
      'POST',
      '/v1/workers',
      descriptor,
    )
    assert.equal(first.status, 200)
    assert.equal(first.body.registered, false)
    assert.deepEqual(first.body.needs.map((n) => n.sha256).sort(), [sha(RUN), sha(SUFFIX)].sort())
    for (const content of [RUN, SUFFIX])
      assert.equal((await api.raw('PUT', '/v1/blobs', { body: Buffer.from(content) })).status, 201)
    const second = await api.call<{ id: string; registered: boolean; needs: unknown[] }>(
      'POST',
      '/v1/workers',
      descriptor,
    )
    assert.deepEqual(second, { status: 201, body: { id: first.body.id, registered: true, needs: [] } })
    const table = await api.ok<{ functions: unknown[] }>('GET', '/v1/functions')
    assert.deepEqual(table.functions, [
      { function: 'upper', version: '1.0', buildSystemVersion: 'bsv-1', workers: [first.body.id] },
    ])

    const inputs = await Promise.all(
      ['hello', 'world'].map(async (text) => {
        const res = await api.raw('PUT', '/v1/blobs', { body: Buffer.from(text) })
        return JSON.parse(res.body.toString()) as { sha256: string; size: number }
      }),
    )
    const action = (i: number) => ({
      function: 'upper',
      version: '1.0',
      buildSystemVersion: 'bsv-1',
      inputs: [inputs[i]],
    })
    // A batch of three, the first repeated: two jobs; the repeat joins its twin's.
    const posted = await api.ok<{ actions: ActionView[] }>('POST', '/v1/actions', {
      actions: [action(0), action(1), action(0)],
      maxPrice: 100_000,
    })
    const [a, b, again] = posted.actions
    assert.equal(again.id, a.id)
    assert.equal(again.jobId, a.jobId, 'the repeat joins the live job')
    assert.notEqual(b.jobId, a.jobId)
    assert.equal(
      a.id,
      sha(
        JSON.stringify({
          buildSystemVersion: 'bsv-1',
          function: 'upper',
          inputs: [inputs[0]],
          version: '1.0',
        }),
      ),
      "the action's id is the hash of its canonical descriptor",
    )

    for (const [view, text] of [
      [a, 'HELLO!\n'],
      [b, 'WORLD!\n'],
    ] as const) {
      const job = await jobReaches(net.requester, view.jobId)
      assert.equal(job.state, 'completed', JSON.stringify(job.record.error ?? job.record.result?.stderr))
      assert.ok(job.record.settlement, 'the contract is settled')
      const done = await api.ok<ActionView>('GET', `/v1/actions/${view.id}`)
      assert.equal(done.state, 'completed')
      const states = (done.history ?? []).map((e) => e.state)
      assert.deepEqual([states[0], states[states.length - 1]], ['posted', 'completed'])
      assert.ok(states.includes('running'), states.join())
      const times = (done.history ?? []).map((e) => e.at)
      assert.deepEqual(
        times,
        [...times].sort((x, y) => x - y),
        'oldest first, each with its time',
      )
      const upper = done.outputs?.find((o) => o.path === 'upper.txt')
      assert.deepEqual(upper, { path: 'upper.txt', sha256: sha(text), size: text.length })
      const meta = done.outputs?.find((o) => o.path === 'meta.txt')
      const metaText = (await api.raw('GET', `/v1/jobs/${view.jobId}/outputs/meta.txt`)).body
      assert.equal(sha(metaText), meta?.sha256, 'the fetched output checks against its hash')
      assert.equal(
        metaText.toString(),
        `upper 1.0 ${view.id}\n`,
        'the build file is the canonical descriptor',
      )
    }

    // Posted again once verified: answered from the cache, no new job.
    const jobsBefore = (await net.requester.orchestrator!.page({ limit: 100 })).jobs.length
    const repeat = await api.ok<{ actions: ActionView[] }>('POST', '/v1/actions', {
      actions: [action(0), action(1)],
      maxPrice: 100_000,
    })
    assert.deepEqual(
      repeat.actions.map((v) => [v.state, v.cached, v.jobs.length]),
      [
        ['completed', true, 1],
        ['completed', true, 1],
      ],
    )
    assert.equal((await net.requester.orchestrator!.page({ limit: 100 })).jobs.length, jobsBefore)
    // The same through the CLI: a file of two descriptors, both answered from the cache.
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    const sock = net.requester.socketPath!
    const file = join(net.root, 'actions.json')
    await writeFile(file, JSON.stringify([action(0), action(1)]))
    const viaCli = (await dms('action', 'post', '-f', file, '--max-price', '100000', '--socket', sock)) as {
      actions: ActionView[]
    }
    assert.deepEqual(
      viaCli.actions.map((v) => [v.id, v.cached]),
      [
        [a.id, true],
        [b.id, true],
      ],
    )
    const status = (await dms('action', 'status', a.id, '--socket', sock)) as ActionView
    assert.deepEqual([status.state, status.jobId], ['completed', a.jobId])
    assert.equal((await net.requester.orchestrator!.page({ limit: 100 })).jobs.length, jobsBefore)
    assert.deepEqual(net.requester.functions?.actions.counts, { hits: 4, misses: 2, joined: 1 })
    const metrics = (await api.raw('GET', '/metrics')).body.toString()
    assert.match(metrics, /^dms_actions_total\{outcome="hit"\} 4$/m)
    assert.match(metrics, /^dms_actions_total\{outcome="miss"\} 2$/m)
  })

  it('refuses an action no worker implements, and a hostile worker descriptor, before any job', async function () {
    const none = await api.call<{ error: { code: string; field: string } }>('POST', '/v1/actions', {
      actions: [{ function: 'upper', version: '9', buildSystemVersion: 'bsv-1', inputs: [] }],
      maxPrice: 1,
    })
    assert.equal(none.status, 404)
    assert.equal(none.body.error.code, 'NO_WORKER')
    const hostile = await api.call<{ error: { code: string; field: string } }>('POST', '/v1/workers', {
      ...descriptor,
      executables: [{ path: '../../bin/sh', sha256: sha(RUN), size: 1 }],
    })
    assert.equal(hostile.status, 400)
    assert.deepEqual(
      [hostile.body.error.code, hostile.body.error.field],
      ['INVALID_WORKER', 'executables.0.path'],
    )
  })
})
