/**
 * Queues, listing and rerun on a real network (contract-db, one provider, a requester on
 * 127.0.0.1, over the requester's REST socket). The provider's runs are held by a test executor
 * (named as such: it stands in for Docker so the jobs stay running until the test says) so the
 * counts can be read while jobs are live.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { ApiClient } from '../../../dms/api/client.js'
import { jobReaches, startNetwork, type TestNetwork } from '../../helpers/network.js'
import { HeldExecutor } from '../../helpers/held-executor.js'

const MiB = 1024 * 1024
const exec = promisify(execFile)
/** The built CLI as a separate process: exit code and output. */
async function dms(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/dms.js', ...args], { timeout: 30_000 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number; stdout: string; stderr: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr }
  }
}

type Queue = { id: string; state: string; counts: Record<string, number> }
type Err = { error: { code: string } }

const spec = (queue?: string) => ({
  image: 'dms-test:1',
  command: ['true'],
  resources: { cpu: 0.01, memory: '8MiB', disk: '1MiB' },
  maxDuration: 60,
  maxPrice: 100_000,
  ...(queue !== undefined ? { queue } : {}),
})

describe('queues, listing and rerun on a real network', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let api: ApiClient
  let executor: HeldExecutor

  beforeEach(async () => {
    executor = new HeldExecutor()
    net = await startNetwork([{ cpu: 4, memoryBytes: 1024 * MiB, perCpuHour: 3_600_000 }], {
      components: { executor },
      requester: { bidWindowMs: 1000 },
      fund: 100_000_000,
    })
    // Wait for the requester's gossip stream to the provider (see terminate-on-failure.spec.ts).
    const pubsub = net.requester.host.services.pubsub
    const outbound = (pubsub as unknown as { streamsOutbound: Map<string, unknown> }).streamsOutbound
    while (!outbound.has(net.providers[0].peerId))
      await new Promise((r) => pubsub.addEventListener('gossipsub:heartbeat', r, { once: true }))
    api = new ApiClient(net.requester.socketPath!)
  })
  afterEach(async () => net?.stop())

  const post = async (queue?: string) => (await api.ok<{ id: string }>('POST', '/v1/jobs', spec(queue))).id
  const queue = (id: string) => api.ok<Queue>('GET', `/v1/queues/${id}`)

  it('a queue of 100 jobs: drain refuses new jobs with 409 and ends with the last job; pages and rerun', async () => {
    const q = await api.ok<Queue>('POST', '/v1/queues', { tag: 'batch' })
    const ids: string[] = []
    for (let i = 0; i < 100; i++) ids.push(await post(q.id))
    await executor.runsStarted(100)
    assert.deepEqual((await queue(q.id)).counts, { active: 100, completed: 0, failed: 0, cancelled: 0 })

    const drain = await api.call<Queue>('POST', `/v1/queues/${q.id}/drain`)
    assert.equal(drain.status, 202)
    assert.equal(drain.body.state, 'draining')
    const refused = await api.call<Err>('POST', '/v1/jobs', spec(q.id))
    assert.equal(refused.status, 409)
    assert.equal(refused.body.error.code, 'QUEUE_DRAINING')
    const live = await api.call<Err>('POST', `/v1/jobs/${ids[0]}/rerun`)
    assert.equal(live.status, 409)
    assert.equal(live.body.error.code, 'JOB_LIVE')

    executor.open()
    for (const id of ids) assert.equal((await jobReaches(net.requester, id)).state, 'completed')
    await net.requester.queues!.idle()
    const drained = await queue(q.id)
    assert.equal(drained.state, 'drained')
    assert.deepEqual(drained.counts, { active: 0, completed: 100, failed: 0, cancelled: 0 })

    // Paged by queue and state, 10 at a time: each job once, newest first.
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const page = await api.ok<{ jobs: Array<{ id: string; queue: string }>; next?: string }>(
        'GET',
        `/v1/jobs?queue=${q.id}&state=completed&limit=10${cursor !== undefined ? `&cursor=${cursor}` : ''}`,
      )
      assert.ok(page.jobs.length <= 10)
      seen.push(...page.jobs.map((j) => j.id))
      cursor = page.next
    } while (cursor !== undefined)
    assert.deepEqual(seen, [...ids].reverse())
    const unknown = await api.call<Err>('GET', '/v1/jobs?colour=red')
    assert.equal(unknown.status, 400)
    assert.equal(unknown.body.error.code, 'INVALID_REQUEST')

    // A completed job rerun: a new linked job, outside the drained queue.
    const rerun = await api.call<{ id: string }>('POST', `/v1/jobs/${ids[0]}/rerun`)
    assert.equal(rerun.status, 201)
    const again = await jobReaches(net.requester, rerun.body.id)
    assert.equal(again.state, 'completed')
    assert.equal(again.record.rerunOf, ids[0])
    assert.equal(again.record.spec.queue, undefined)
    assert.deepEqual(again.record.spec.command, ['true'])
  })

  it('cancel ends every live job cancelled and leaves no escrow locked at the contract-db', async () => {
    const q = await api.ok<Queue>('POST', '/v1/queues', { tag: 'doomed' })
    const ids: string[] = []
    for (let i = 0; i < 6; i++) ids.push(await post(q.id))
    await executor.runsStarted(6)
    assert.ok((await net.contractDb.service.account(net.requester.peerId)).escrow > 0, 'escrow locked')

    const cancel = await api.call<Queue>('DELETE', `/v1/queues/${q.id}`)
    assert.equal(cancel.status, 202)
    assert.equal(cancel.body.state, 'cancelled')
    for (const id of ids) assert.equal((await jobReaches(net.requester, id)).state, 'cancelled')
    await net.requester.queues!.idle()
    assert.deepEqual((await queue(q.id)).counts, { active: 0, completed: 0, failed: 0, cancelled: 6 })
    assert.equal((await net.contractDb.service.account(net.requester.peerId)).escrow, 0)
    const contracts = await net.contractDb.service.listContracts()
    assert.equal(contracts.length, 6)
    assert.ok(
      contracts.every((c) => c.state !== 'active'),
      contracts.map((c) => c.state).join(),
    )
    const refused = await api.call<Err>('POST', '/v1/jobs', spec(q.id))
    assert.equal(refused.status, 409)
    assert.equal(refused.body.error.code, 'QUEUE_ENDED')

    // Retention: the newest two ended jobs are kept; the queue's counts are of its stored jobs.
    const live = await post() // not in the queue; runs (held) while the prune goes on
    await executor.runsStarted(7)
    const pruned = await api.ok<{ pruned: number }>('POST', '/v1/jobs/prune', { keepLast: 2 })
    assert.equal(pruned.pruned, 4)
    const left = await api.ok<{ jobs: Array<{ id: string }> }>('GET', '/v1/jobs?limit=100')
    assert.equal(left.jobs.length, 3)
    assert.ok(
      left.jobs.some((j) => j.id === live),
      'a live job is never pruned',
    )
    assert.ok(left.jobs.every((j) => j.id === live || ids.includes(j.id)))
    assert.equal((await queue(q.id)).counts.cancelled, 2)
    const none = await api.call<Err>('POST', '/v1/jobs/prune', {})
    assert.equal(none.status, 400, 'no policy given nor configured')
  })

  it('the CLI: queue create|list|drain|cancel, job list filters with a table, job rerun', async () => {
    const sock = ['--socket', net.requester.socketPath!]
    const created = await dms('queue', 'create', 'nightly', '--max-retries', '1', '--json', ...sock)
    assert.equal(created.code, 0, created.stderr)
    const q = JSON.parse(created.stdout) as Queue & { maxRetries: number }
    assert.equal(q.maxRetries, 1)
    executor.open()
    const ids = [await post(q.id), await post(q.id)]
    for (const id of ids) await jobReaches(net.requester, id)
    assert.equal(
      (await net.requester.orchestrator!.get(ids[0]))?.record.spec.retries,
      1,
      "the queue's default",
    )

    const list = await dms('job', 'list', '--queue', q.id, '--state', 'completed', '--limit', '1', ...sock)
    assert.equal(list.code, 0, list.stderr)
    const lines = list.stdout.trim().split('\n')
    assert.match(lines[0], /^ID\s+STATE\s+CREATED\s+QUEUE\s+NAME$/)
    assert.ok(lines[1].startsWith(ids[1]), 'newest first')
    assert.match(lines[2], /^more: add --cursor [A-Za-z0-9_-]+$/)
    const queues = await dms('queue', 'list', ...sock)
    assert.match(queues.stdout, /^ID\s+TAG\s+STATE\s+ACTIVE\s+COMPLETED\s+FAILED\s+CANCELLED\n/)
    assert.match(queues.stdout, new RegExp(`${q.id}\\s+nightly\\s+active\\s+0\\s+2\\s+0\\s+0`))
    const rerun = await dms('job', 'rerun', ids[0], '--json', ...sock)
    assert.equal(rerun.code, 0, rerun.stderr)
    const again = await jobReaches(net.requester, (JSON.parse(rerun.stdout) as { id: string }).id)
    assert.equal(again.record.rerunOf, ids[0])
    assert.equal(again.record.spec.queue, q.id, 'the queue is active: the rerun joins it')

    const drained = await dms('queue', 'drain', q.id, '--json', ...sock)
    assert.equal((JSON.parse(drained.stdout) as Queue).state, 'drained')
    const cancel = await dms('queue', 'cancel', q.id, ...sock)
    assert.equal(cancel.code, 1)
    assert.match(cancel.stderr, /QUEUE_ENDED|is drained/)
  })
})
