/**
 * A provider whose only engine is the process engine (`provider.engines: ["process"]`: no Docker
 * is built or asked), in its own process over real libp2p, sells work through the market: a
 * runtime job posted over REST runs in its namespaces and settles on a signed receipt; a two-task
 * workflow hands task 1's outputs to task 2; an image job is declined with a reason that names no
 * local path or command.
 */
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ApiClient } from '../../dms/api/client.js'
import type { NodeConfig } from '../../dms/config.js'
import type { StoredJob } from '../../dms/orchestrator/orchestrator.js'
import { BID_REQUEST_TOPIC } from '../../dms/protocol/handles.js'
import { jobIdOf } from '../../dms/workflows/machine.js'
import { workflowEnds } from '../helpers/workflow-ends.js'
import { jobReaches, prices, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'
import { peerIdOfDataDir, startDms, type DmsProcess } from '../helpers/processes.js'

const MiB = 1024 * 1024

/** A runtime job running `sh -c script` on the process engine. */
const shJob = (script: string) => ({
  runtime: '/bin/sh',
  command: ['/bin/sh', '-c', script],
  resources: { cpu: 0.5, memory: '64MiB', disk: '16MiB' },
  maxDuration: 60,
  maxPrice: 100_000,
})

describe('a provider with only the process engine (separate process, no Docker)', function () {
  this.timeout(90_000)
  let net: TestNetwork
  let provider: DmsProcess | undefined
  let api: ApiClient

  before(async function () {
    net = await startNetwork([], { requester: { bidWindowMs: 1000, livenessTimeoutMs: 30_000 } })
    api = new ApiClient(net.requester.socketPath!)
    const dataDir = join(net.root, 'process-provider')
    const config: NodeConfig = {
      dataDir,
      oneHost: true,
      api: false,
      bootstrap: [...net.contractDb.addrs(), ...net.requester.addrs()],
      provider: {
        contractDb: net.contractDb.peerId,
        engines: ['process'],
        process: { runtimes: ['/bin/sh'] },
        offer: { cpu: 1, memoryBytes: 512 * MiB, diskBytes: 256 * MiB, gpus: 0, prices: prices(1000) },
      },
    }
    const configPath = join(net.root, 'process-provider.json')
    await writeFile(configPath, JSON.stringify(config))
    await net.contractDb.service.approve(await peerIdOfDataDir(dataDir))
    provider = await startDms(configPath, 'warn')
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)
  })

  after(async function () {
    provider?.child.kill('SIGTERM')
    await provider?.exited
    await net?.stop()
  })

  it('runs a runtime job posted over REST, on the process engine, and settles it', async function () {
    const posted = await api.ok<{ id: string }>('POST', '/v1/jobs', {
      name: 'runtime hello',
      ...shJob('echo hi from $(id -u); echo -n 42 > /outputs/a'),
    })
    const done = await jobReaches(net.requester, posted.id)
    assert.equal(done.state, 'completed', JSON.stringify(done.record.error))
    const r = done.record
    assert.equal(r.result?.stdout, 'hi from 65534\n', 'ran as nobody, in the sandbox')
    assert.equal(r.winner?.provider, provider!.peerId)
    const bid = r.bids.find((b) => b.provider === provider!.peerId)
    assert.equal(bid?.engine, 'process', 'the bid names the engine that runs the job')
    assert.equal(bid?.image, 'runtime:/bin/sh', "the bid names the job's runtime")
    assert.deepEqual(r.verification, { outputsHashOk: true, receiptSignatureOk: true })
    assert.deepEqual(
      r.result?.outputs.map((o) => [o.path, o.size]),
      [['a', 2]],
    )
    const a = await api.raw('GET', `/v1/jobs/${posted.id}/outputs/a`)
    assert.equal(a.body.toString(), '42')
    assert.ok(r.settlement, 'the contract is settled')
    const contract = await net.contractDb.service.contract(r.contract!.terms.contractId)
    assert.equal(contract?.state, 'settled')
    // The stored spec names the artifact as the bid and the contract do.
    const view = await api.ok<{ spec: { image?: string } }>('GET', `/v1/jobs/${posted.id}`)
    assert.equal(view.spec.image, 'runtime:/bin/sh')
  })

  it('runs a two-task workflow: task 2 reads what task 1 wrote, two settled contracts', async function () {
    const posted = await net.requester.workflows!.post({
      name: 'hand-off on processes',
      tasks: [
        { name: 'one', job: shJob('echo -n seed > /outputs/seed.txt'), outputs: ['seed.txt'] },
        {
          name: 'two',
          job: shJob('echo "two saw $(cat /inputs/seed.txt)" | tee /outputs/two.txt'),
          from: [{ fromTask: 'one', path: 'seed.txt' }],
        },
      ],
    })
    const wf = await workflowEnds(net, posted.record.id)
    assert.equal(wf.state, 'completed', JSON.stringify(wf.record.tasks))
    const orch = net.requester.orchestrator!
    const [one, two] = (await Promise.all(
      ['one', 'two'].map((t) => orch.get(jobIdOf(wf.record.id, t))),
    )) as StoredJob[]
    assert.equal(two.record.result?.stdout, 'two saw seed\n')
    const seed = one.record.result?.outputs.find((o) => o.path === 'seed.txt')
    assert.equal(two.record.spec.inputs?.find((i) => i.path === 'seed.txt')?.sha256, seed?.sha256)
    const contracts = await Promise.all(
      [one, two].map((j) => net.contractDb.service.contract(j.record.contract!.terms.contractId)),
    )
    assert.deepEqual(
      contracts.map((k) => k?.state),
      ['settled', 'settled'],
    )
  })

  it('declines an image job, saying only that no engine here runs it', async function () {
    const job = await net.requester.orchestrator!.post(
      (await import('../../dms/orchestrator/job-spec.js')).parseJobSpec({
        image: TEST_IMAGE,
        command: ['sh', '-c', 'echo never'],
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 100_000,
        retries: 0,
      }),
    )
    const done = await jobReaches(net.requester, job.record.id)
    assert.equal(done.state, 'failed')
    const declines = done.record.declines ?? []
    const ours = declines.find((d) => d.provider === provider!.peerId)
    assert.deepEqual(ours?.reasons, ['no engine here runs an image'], JSON.stringify(declines))
  })
})
