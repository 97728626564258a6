/**
 * A workflow with a pod on a real network (in-process nodes, real libp2p, real Docker): the pod's
 * two tasks run as one job on one provider under one contract, the second reading a file the first
 * wrote in /pod; a task downstream reads each member's own output (its `<task>/` subtree of the
 * pod's archive, handed on provider to provider). A pod too big for every provider fails each of
 * its tasks with the providers' reasons; a cancel mid-run cancels the pod's one job.
 */
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { jobIdOf, podJobIdOf } from '../../dms/workflows/machine.js'
import { workflowEnds } from '../helpers/workflow-ends.js'
import { startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'
import { contractedFor } from '../../dms/contracts/terms.js'

const MiB = 1024 * 1024
const execFileP = promisify(execFile)
const job = (script: string, cpu = 0.5) => ({
  image: TEST_IMAGE,
  command: ['sh', '-c', script],
  resources: { cpu, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 5000,
})

describe('workflow pods (real network, real Docker)', function () {
  this.timeout(120_000)
  let net: TestNetwork

  before(async function () {
    execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' })
    net = await startNetwork([{ cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      requester: { bidWindowMs: 1000, enoughBids: 1 },
    })
  })
  after(async () => net?.stop())

  it("a pod of two shares /pod on one provider under one contract; a task downstream reads each member's outputs", async () => {
    const posted = await net.requester.workflows!.post({
      // The pod's archive stays at its provider after the end, for the fetch below.
      keepOutputs: true,
      tasks: [
        {
          name: 'a',
          pod: 'p',
          job: job(
            'echo a-log; echo -n from-a > /pod/.x && mv /pod/.x /pod/x && echo -n a-out > /outputs/o.txt',
          ),
          outputs: ['o.txt'],
        },
        {
          name: 'b',
          pod: 'p',
          // Waits for a's file in the shared /pod (inside the container, bounded by maxDuration).
          job: job(
            'while [ ! -f /pod/x ]; do sleep 0.05; done; echo "b read $(cat /pod/x)" > /outputs/o.txt',
          ),
          outputs: ['o.txt'],
        },
        {
          name: 'down',
          job: job('cat /inputs/a.txt; echo; cat /inputs/b/o.txt'),
          from: [
            { fromTask: 'a', path: 'o.txt', as: 'a.txt' },
            { fromTask: 'b', as: 'b' },
          ],
        },
      ],
    })
    const id = posted.record.id
    const wf = await workflowEnds(net, id)
    assert.equal(wf.state, 'completed', JSON.stringify(wf.record.tasks))
    const orch = net.requester.orchestrator!
    const pod = (await orch.get(podJobIdOf(id, 'p')))!
    const down = (await orch.get(jobIdOf(id, 'down')))!
    assert.deepEqual([wf.record.tasks.a.jobId, wf.record.tasks.b.jobId], [pod.record.id, pod.record.id])
    assert.equal(await orch.get(jobIdOf(id, 'a')), undefined, 'no job of its own for a pod task')

    // b read a's file from /pod; down read each member's own output, handed on from the pod's archive.
    assert.equal(down.record.result?.stdout, 'a-out\nb read from-a\n')
    const entries = pod.record.result!.outputs.map((o) => o.path).sort()
    assert.deepEqual(entries, ['a/o.txt', 'b/o.txt'])
    const inputs = down.record.spec.inputs!.map((i) => [i.path, i.source?.entry, i.source?.archive])
    const archive = pod.record.result!.archive!.sha256
    assert.deepEqual(inputs.sort(), [
      ['a.txt', 'a/o.txt', archive],
      ['b/o.txt', 'b/o.txt', archive],
    ])
    assert.equal(pod.record.verification?.outputsHashOk, true)

    // One contract for the pod (its resources the members' sums), one for down: both settled.
    const contracts = await net.contractDb.service.listContracts()
    assert.deepEqual(
      contracts.map((k) => k.contract.terms.jobId).sort(),
      [pod.record.id, down.record.id].sort(),
    )
    assert.deepEqual(
      contracts.map((k) => k.state),
      ['settled', 'settled'],
    )
    const podTerms = contractedFor(
      contracts.find((k) => k.contract.terms.jobId === pod.record.id)!.contract.terms,
    )
    assert.equal(podTerms.resources.cpu, 1)
    assert.equal(podTerms.resources.memoryBytes, 128 * MiB)
    assert.equal((await net.contractDb.service.account(net.requester.peerId)).escrow, 0)

    // b's outputs on demand, with the built CLI: its subtree of the pod's archive, written without
    // the `b/` prefix, and nothing of a's.
    const out = join(net.root, 'b-outputs')
    const cli = await execFileP(
      process.execPath,
      ['bin/dms.js', 'workflow', 'outputs', id, 'b', '--out', out, '--socket', net.requester.socketPath!],
      { timeout: 30_000 },
    )
    assert.match(cli.stdout, /\/b-outputs\/o\.txt +14$/m)
    assert.equal(await readFile(join(out, 'o.txt'), 'utf8'), 'b read from-a\n')
    assert.deepEqual(await readdir(out), ['o.txt'])

    // a's logs: its own container's, out of the pod's job.
    const logs = await execFileP(
      process.execPath,
      ['bin/dms.js', 'workflow', 'logs', id, 'a', '--socket', net.requester.socketPath!],
      { timeout: 30_000 },
    )
    assert.equal(logs.stdout, 'a-log\n')
  })

  it("a pod too big for every provider fails each of its tasks with the providers' reasons", async () => {
    const posted = await net.requester.workflows!.post({
      tasks: [
        { name: 'big1', pod: 'big', job: { ...job('true', 1.5), queueTimeout: 0 } },
        { name: 'big2', pod: 'big', job: { ...job('true', 1.5), queueTimeout: 0 } },
        { name: 'after', job: job('true'), runAfter: ['big1'] },
      ],
    })
    const wf = await workflowEnds(net, posted.record.id)
    assert.equal(wf.state, 'failed')
    for (const t of ['big1', 'big2']) {
      assert.equal(wf.record.tasks[t].error?.code, 'NO_BIDS', t)
      assert.match(wf.record.tasks[t].error?.message ?? '', /not enough cpu: need 3 cores/, t)
    }
    assert.equal(wf.record.tasks.after.error?.code, 'UPSTREAM_FAILED')
  })

  it("cancelled mid-run: the pod's one job is cancelled, both tasks end cancelled, the time used is paid", async () => {
    const posted = await net.requester.workflows!.post({
      tasks: [
        { name: 'x', pod: 'long', job: job('sleep 60') },
        { name: 'y', pod: 'long', job: job('sleep 60') },
        { name: 'z', job: job('true'), runAfter: ['y'] },
      ],
    })
    const id = posted.record.id
    const podId = podJobIdOf(id, 'long')
    await new Promise<void>((resolve) => {
      const off = net.requester.orchestrator!.onUpdate((jobId, u) => {
        if (jobId === podId && u.state === 'running') {
          off()
          resolve()
        }
      })
    })
    await net.requester.workflows!.cancel(id)
    const wf = await workflowEnds(net, id)
    assert.equal(wf.state, 'cancelled')
    assert.deepEqual(
      ['x', 'y', 'z'].map((t) => wf.record.tasks[t].state),
      ['cancelled', 'cancelled', 'cancelled'],
    )
    const pod = (await net.requester.orchestrator!.get(podId))!
    assert.equal(pod.state, 'cancelled')
    const s = pod.record.settlement!
    assert.equal(s.outcome, 'terminated')
    assert.ok(s.paidToProvider > 0 && s.refundedToRequester > 0, `paid ${s.paidToProvider}`)
    assert.equal(await net.requester.orchestrator!.get(jobIdOf(id, 'z')), undefined)
    assert.equal((await net.contractDb.service.account(net.requester.peerId)).escrow, 0)
  })
})
