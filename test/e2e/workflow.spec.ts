/**
 * Workflows on a real network (in-process nodes, real libp2p, real Docker): a diamond whose last
 * task reads files the two middle ones wrote, the middle ones running at the same time, each task
 * its own settled contract; a failing upstream that fails its dependants and leaves no escrow
 * locked; a cancel mid-run.
 */
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ApiClient } from '../../dms/api/client.js'
import type { StoredJob } from '../../dms/orchestrator/orchestrator.js'
import { jobIdOf } from '../../dms/workflows/machine.js'
import type { StoredWorkflow } from '../../dms/workflows/runner.js'
import { workflowEnds } from '../helpers/workflow-ends.js'
import { startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'

const MiB = 1024 * 1024
const execFileP = promisify(execFile)
const job = (script: string, maxDuration = 60) => ({
  image: TEST_IMAGE,
  command: ['sh', '-c', script],
  resources: { cpu: 0.5, memory: '64MiB' },
  maxDuration,
  maxPrice: 5000,
})

/** Resolves once the workflow ended and every archive left at a provider for it was released. */
function archivesReleased(net: TestNetwork, id: string): Promise<StoredWorkflow> {
  const runner = net.requester.workflows!
  return new Promise((resolve) => {
    const off = runner.onChange((w) => {
      if (w.record.id === id && w.released === true) {
        off()
        resolve(w)
      }
    })
    void runner.get(id).then((w) => {
      if (w?.released === true) {
        off()
        resolve(w)
      }
    })
  })
}

/** Whether the provider that ran `j` still holds its output archive. */
async function providerHolds(net: TestNetwork, j: StoredJob): Promise<boolean> {
  const p = net.providers.find((n) => n.peerId === j.record.winner?.provider)
  assert.ok(p !== undefined, `job ${j.record.id} ran on one of the providers`)
  return p.blobs.store.has(j.record.result!.archive!.sha256)
}

/** The [start, end] of a job's `running` state, from its recorded history. */
function runningInterval(j: StoredJob): [number, number] {
  const h = j.record.history
  const i = h.findIndex((e) => e.state === 'running')
  assert.ok(i >= 0 && i + 1 < h.length, `job ${j.record.id} has a running state and a next one`)
  return [h[i].at, h[i + 1].at]
}

describe('workflows (real network, real Docker)', function () {
  this.timeout(120_000)
  let net: TestNetwork

  before(async function () {
    execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' })
    net = await startNetwork(
      [
        { cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 1000 },
        // The only provider that lets containers use the network.
        { cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 1200, policy: { allowNetwork: true } },
      ],
      { requester: { bidWindowMs: 1500, enoughBids: 2 } },
    )
  })
  after(async () => net?.stop())

  it('a diamond: D reads what B and C wrote, B and C overlap, every hand-off hash-checked, four settled contracts', async () => {
    const posted = await net.requester.workflows!.post({
      name: 'diamond',
      tasks: [
        { name: 'A', job: job('echo -n seed > /outputs/seed.txt'), outputs: ['seed.txt'] },
        {
          name: 'B',
          job: job('sleep 2; echo "B saw $(cat /inputs/seed.txt)" > /outputs/b.txt'),
          from: [{ fromTask: 'A', path: 'seed.txt' }],
          outputs: ['b.txt'],
        },
        {
          name: 'C',
          job: job(
            'sleep 2; mkdir -p /outputs/deep; echo "C saw $(cat /inputs/A/seed.txt)" > /outputs/deep/c.txt',
          ),
          from: [{ fromTask: 'A' }],
        },
        {
          name: 'D',
          job: job('cat /inputs/b.txt /inputs/c/deep/c.txt'),
          from: [
            { fromTask: 'B', path: 'b.txt' },
            { fromTask: 'C', as: 'c' },
          ],
        },
      ],
    })
    const released = archivesReleased(net, posted.record.id)
    const wf = await workflowEnds(net, posted.record.id)
    assert.equal(wf.state, 'completed', JSON.stringify(wf.record.tasks))
    const orch = net.requester.orchestrator!
    const jobs = Object.fromEntries(
      await Promise.all(
        ['A', 'B', 'C', 'D'].map(async (t) => [t, (await orch.get(jobIdOf(wf.record.id, t)))!] as const),
      ),
    )
    assert.equal(jobs.D.record.result?.stdout, 'B saw seed\nC saw seed\n')

    // B and C ran at the same time: their recorded running intervals intersect.
    const [b, c] = [runningInterval(jobs.B), runningInterval(jobs.C)]
    assert.ok(b[0] < c[1] && c[0] < b[1], `B ${b.join('-')} and C ${c.join('-')} overlap`)

    // Each hand-off is the upstream's file as its signed manifest lists it, fetched by the
    // downstream provider from the upstream provider: the requester never downloaded A, B or C's
    // archives (it checked their manifests against the signed receipts).
    const entry = (j: StoredJob, path: string) => j.record.result?.outputs?.find((o) => o.path === path)
    const input = (j: StoredJob, path: string) => j.record.spec.inputs?.find((i) => i.path === path)
    const handed = (down: StoredJob, path: string, up: StoredJob, upPath: string) => {
      const i = input(down, path)
      assert.equal(i?.sha256, entry(up, upPath)?.sha256, `${path} is ${upPath}`)
      assert.equal(i?.source?.peer, up.record.winner?.provider)
      assert.equal(i?.source?.archive, up.record.result?.archive?.sha256)
    }
    handed(jobs.B, 'seed.txt', jobs.A, 'seed.txt')
    handed(jobs.C, 'A/seed.txt', jobs.A, 'seed.txt')
    handed(jobs.D, 'b.txt', jobs.B, 'b.txt')
    handed(jobs.D, 'c/deep/c.txt', jobs.C, 'deep/c.txt')
    const staged = jobs.D.record.updates.find((u) => u.detail?.startsWith('inputs staged'))
    assert.match(staged?.detail ?? '', /2 handed on from upstream providers/)
    const store = net.requester.blobs.store
    for (const t of ['A', 'B', 'C'] as const) {
      assert.equal(jobs[t].record.verification?.outputsHashOk, true)
      assert.equal(
        await store.has(jobs[t].record.result!.archive!.sha256),
        false,
        `${t}'s archive stayed at its provider`,
      )
    }

    // Four contracts, each settled on its own.
    const ids = Object.values(jobs).map((j) => j.record.contract?.terms.contractId)
    const contracts = await Promise.all(ids.map((id) => net.contractDb.service.contract(id!)))
    assert.deepEqual(
      contracts.map((k) => k?.state),
      ['settled', 'settled', 'settled', 'settled'],
    )
    assert.equal((await net.contractDb.service.account(net.requester.peerId)).escrow, 0)

    // Once the workflow ended no task needs A, B or C's archives: their providers deleted them.
    await released
    for (const t of ['A', 'B', 'C'] as const)
      assert.equal(await providerHolds(net, jobs[t]), false, `${t}'s archive is gone from its provider`)
  })

  it("over REST and the CLI's route: an upstream's outputs fetched on demand mid-run, hash-checked; released once the workflow ended", async () => {
    const api = new ApiClient(net.requester.socketPath!)
    const posted = await api.call<{ id: string }>('POST', '/v1/workflows', {
      tasks: [
        { name: 'up', job: job('mkdir /outputs/d; echo -n kept > /outputs/d/k.txt'), outputs: ['d/k.txt'] },
        { name: 'down', job: job('sleep 60', 120), from: [{ fromTask: 'up' }] },
      ],
    })
    const id = posted.body.id
    const downId = jobIdOf(id, 'down')
    await new Promise<void>((resolve) => {
      const off = net.requester.orchestrator!.onUpdate((jobId, u) => {
        if (jobId === downId && u.state === 'running') {
          off()
          resolve()
        }
      })
    })
    const up = (await net.requester.orchestrator!.get(jobIdOf(id, 'up')))!
    const archive = up.record.result!.archive!
    assert.equal(await net.requester.blobs.store.has(archive.sha256), false, 'left at its provider')
    const early = await api.call<{ error: { code: string } }>(
      'POST',
      `/v1/workflows/${id}/tasks/down/outputs`,
    )
    assert.deepEqual([early.status, early.body.error.code], [409, 'OUTPUTS_NOT_READY'])
    const missing = await api.call<{ error: { code: string } }>(
      'POST',
      `/v1/workflows/${id}/tasks/nope/outputs`,
    )
    assert.deepEqual([missing.status, missing.body.error.code], [404, 'TASK_NOT_FOUND'])

    // Asked twice at once: one fetch, both answered.
    type Fetched = { jobId: string; files: Array<{ path: string; sha256: string }> }
    const [fetched, again] = await Promise.all(
      [1, 2].map(() => api.call<Fetched>('POST', `/v1/workflows/${id}/tasks/up/outputs`)),
    )
    assert.deepEqual([fetched.status, again.status], [200, 200])
    assert.deepEqual(again.body, fetched.body)
    assert.equal(fetched.body.jobId, up.record.id)
    assert.deepEqual(
      fetched.body.files.map((f) => f.path),
      ['d/k.txt'],
    )
    assert.equal(await net.requester.blobs.store.has(archive.sha256), true, 'fetched and kept')
    const file = await api.raw('GET', `/v1/jobs/${up.record.id}/outputs/d/k.txt`)
    assert.equal(file.status, 200)
    assert.equal(file.body.toString(), 'kept')
    // The built CLI: the same fetch, then each file downloaded with its sha256 checked.
    const out = join(net.root, 'up-outputs')
    const cli = await execFileP(
      process.execPath,
      ['bin/dms.js', 'workflow', 'outputs', id, 'up', '--out', out, '--socket', net.requester.socketPath!],
      { timeout: 30_000 },
    )
    assert.match(cli.stdout, /^\S*\/d\/k\.txt +4$/m)
    assert.equal(await readFile(join(out, 'd', 'k.txt'), 'utf8'), 'kept')

    // Cancelled: the workflow ended, so the provider of `up` is told to delete its archive.
    const released = archivesReleased(net, id)
    assert.equal(await providerHolds(net, up), true)
    await api.call('DELETE', `/v1/workflows/${id}`)
    await released
    assert.equal(await providerHolds(net, up), false)
  })

  it('per-task network: the task that asks for it gets a bridge where allowed, its neighbour on the same provider none', async () => {
    const netProvider = net.providers[1].peerId
    const posted = await net.requester.workflows!.post({
      tasks: [
        { name: 'on', job: { ...job('ls /sys/class/net'), network: true } },
        { name: 'off', job: { ...job('ls /sys/class/net'), providers: { allow: [netProvider] } } },
      ],
    })
    const wf = await workflowEnds(net, posted.record.id)
    assert.equal(wf.state, 'completed', JSON.stringify(wf.record.tasks))
    const orch = net.requester.orchestrator!
    const [on, off] = await Promise.all(
      ['on', 'off'].map(async (t) => (await orch.get(jobIdOf(wf.record.id, t)))!),
    )
    assert.deepEqual([on.record.winner?.provider, off.record.winner?.provider], [netProvider, netProvider])
    assert.deepEqual(on.record.result?.stdout.split('\n').filter(Boolean).sort(), ['eth0', 'lo'])
    assert.deepEqual(off.record.result?.stdout.split('\n').filter(Boolean), ['lo'])
    const declined = on.record.declines?.find((d) => d.provider === net.providers[0].peerId)
    assert.deepEqual(declined?.reasons, ['network not allowed here: the job asks for network access'])
  })

  it('a failing upstream ends its dependants UPSTREAM_FAILED and leaves no escrow locked', async () => {
    const posted = await net.requester.workflows!.post({
      tasks: [
        { name: 'bad', job: job('echo broken >&2; exit 3') },
        { name: 'next', job: job('true'), runAfter: ['bad'] },
        { name: 'last', job: job('true'), runAfter: ['next'] },
      ],
    })
    const wf = await workflowEnds(net, posted.record.id)
    assert.equal(wf.state, 'failed')
    assert.equal(wf.record.tasks.bad.state, 'failed')
    assert.equal(wf.record.tasks.next.error?.code, 'UPSTREAM_FAILED')
    assert.equal(wf.record.tasks.last.error?.code, 'UPSTREAM_FAILED')
    assert.equal(await net.requester.orchestrator!.get(jobIdOf(wf.record.id, 'next')), undefined)
    assert.equal((await net.contractDb.service.account(net.requester.peerId)).escrow, 0)
  })
  it('refuses a plan the balance at the contract-db does not cover, saying by how much, before anything starts', async () => {
    const { balance } = await net.contractDb.service.account(net.requester.peerId)
    const big = { ...job('true'), maxPrice: balance }
    const before = (await net.requester.orchestrator!.list()).length
    await assert.rejects(
      net.requester.workflows!.post({
        tasks: [
          { name: 'x', job: big },
          { name: 'y', job: { ...big, maxPrice: 7 } },
        ],
      }),
      (err: Error & { code: string; data: { shortfall: number } }) => {
        assert.equal(err.code, 'INSUFFICIENT_BALANCE')
        assert.equal(err.data.shortfall, 7)
        assert.match(err.message, /short by 7$/)
        return true
      },
    )
    assert.equal((await net.requester.orchestrator!.list()).length, before, 'no job was posted')
  })
  it('over REST: cancelling mid-run cancels the live task, pays only the time used, and starts no other', async () => {
    const api = new ApiClient(net.requester.socketPath!)
    const posted = await api.call<{ id: string; state: string }>('POST', '/v1/workflows', {
      name: 'long',
      tasks: [
        { name: 'slow', job: job('sleep 60', 120) },
        { name: 'after', job: job('true'), runAfter: ['slow'] },
      ],
    })
    assert.equal(posted.status, 201)
    const slowId = jobIdOf(posted.body.id, 'slow')
    await new Promise<void>((resolve) => {
      const off = net.requester.orchestrator!.onUpdate((jobId, u) => {
        if (jobId === slowId && u.state === 'running') {
          off()
          resolve()
        }
      })
    })
    const accepted = await api.call<{ id: string; state: string }>(
      'DELETE',
      `/v1/workflows/${posted.body.id}`,
    )
    assert.equal(accepted.status, 202)
    assert.deepEqual(accepted.body, { id: posted.body.id, state: 'cancelling' })
    const wf = await workflowEnds(net, posted.body.id)
    assert.equal(wf.state, 'cancelled')
    assert.deepEqual([wf.record.tasks.slow.state, wf.record.tasks.after.state], ['cancelled', 'cancelled'])
    const slow = (await net.requester.orchestrator!.get(slowId))!
    const s = slow.record.settlement!
    assert.equal(s.outcome, 'terminated')
    assert.ok(
      s.paidToProvider > 0 && s.refundedToRequester > 0,
      `paid ${s.paidToProvider}, refunded ${s.refundedToRequester}`,
    )
    assert.equal(await net.requester.orchestrator!.get(jobIdOf(posted.body.id, 'after')), undefined)

    const shown = await api.call<{ state: string; tasks: Record<string, { state: string }> }>(
      'GET',
      `/v1/workflows/${posted.body.id}`,
    )
    assert.equal(shown.body.state, 'cancelled')
    const list = await api.call<{ workflows: Array<{ id: string; tasks: number }> }>('GET', '/v1/workflows')
    assert.ok(list.body.workflows.some((w) => w.id === posted.body.id && w.tasks === 2))
    const again = await api.call<{ error: { code: string } }>('DELETE', `/v1/workflows/${posted.body.id}`)
    assert.deepEqual([again.status, again.body.error.code], [409, 'WORKFLOW_ENDED'])
    const bad = await api.call<{ error: { code: string; field: string } }>('POST', '/v1/workflows', {
      tasks: [{ name: 'a', job: job('true'), runAfter: ['nope'] }],
    })
    assert.deepEqual(
      [bad.status, bad.body.error.code, bad.body.error.field],
      [400, 'INVALID_WORKFLOW', 'tasks.0.runAfter.0'],
    )
    assert.equal((await net.contractDb.service.account(net.requester.peerId)).escrow, 0)
  })
})
