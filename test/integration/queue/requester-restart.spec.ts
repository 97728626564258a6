/**
 * A queued job survives a SIGKILL of its requester (`dms run` in its own process): restored from
 * its stored snapshot with its deadline, it bids again once the busy provider frees its capacity,
 * and completes. The provider runs in-process with a test executor (held until the test opens it).
 */
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ApiClient } from '../../../dms/api/client.js'
import type { NodeConfig } from '../../../dms/config.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import type { StoredJob } from '../../../dms/orchestrator/orchestrator.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import { freePort, peerIdOfDataDir, startDms, type DmsProcess } from '../../helpers/processes.js'

const MiB = 1024 * 1024

describe('queued jobs: a SIGKILLed requester', function () {
  this.timeout(90_000)
  let net: TestNetwork
  const procs: DmsProcess[] = []
  const executor = new CountingExecutor(5)

  before(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      components: { executor },
    })
  })
  after(async () => {
    for (const p of procs) {
      p.child.kill('SIGKILL')
      await p.exited
    }
    await net?.stop()
  })

  it('restores the queued job with its deadline, and it completes once the provider has room', async () => {
    // The provider is busy with another requester's job until the test opens the gate.
    let open!: () => void
    executor.gate = new Promise<void>((r) => (open = r))
    const blocker = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 1, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 100_000,
      }),
    )
    await jobReaches(net.requester, blocker.record.id, ['running'])

    const config: NodeConfig = {
      dataDir: join(net.root, 'requester-proc'),
      oneHost: true,
      listen: [`/ip4/127.0.0.1/tcp/${await freePort()}`],
      bootstrap: [...net.contractDb.addrs(), ...net.providers[0].addrs()],
      requester: {
        contractDb: { peer: net.contractDb.peerId, addrs: net.contractDb.addrs() },
        bidWindowMs: 1000,
      },
    }
    const configPath = join(net.root, 'requester.json')
    await writeFile(configPath, JSON.stringify(config))
    const peer = await peerIdOfDataDir(config.dataDir)
    await net.contractDb.service.approve(peer)
    await net.contractDb.service.credit(peer, 1_000_000)
    let requester = await startDms(configPath)
    procs.push(requester)

    const queued = requester.logLine((l) => l.msg === 'job queued')
    const posted = await new ApiClient(requester.socket!).ok<{ id: string }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      command: ['true'],
      resources: { cpu: 1, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 100_000,
      queueTimeout: 120,
    })
    const line = await queued
    assert.equal(line.jobId, posted.id)
    const deadline = line.deadline as number

    requester.child.kill('SIGKILL')
    await requester.exited
    procs.splice(procs.indexOf(requester), 1)
    requester = await startDms(configPath)
    procs.push(requester)
    const finished = requester.logLine((l) => l.msg === 'job finished' && l.jobId === posted.id)
    executor.gate = undefined
    open()
    assert.equal((await jobReaches(net.requester, blocker.record.id)).state, 'completed')
    const end = await finished
    assert.equal(end.state, 'completed', JSON.stringify(end.error))

    const job = await new ApiClient(requester.socket!).ok<StoredJob['record'] & { state: string }>(
      'GET',
      `/v1/jobs/${posted.id}`,
    )
    assert.equal(job.state, 'completed')
    assert.equal(job.queue?.deadline, deadline, 'the deadline survived the restart')
    const states = job.history.map((h) => h.state)
    assert.deepEqual(states.slice(0, 3), ['bidding', 'selecting', 'queued'])
    assert.equal(states.at(-1), 'completed')
  })
})
