/**
 * Failures of whole processes (SIGKILL, nodes in their own processes, real Docker): the running
 * provider dies -> the requester drops it at its liveness deadline, terminates the contract for
 * provider fault and the job completes on another provider; the requester dies mid-job -> after a
 * restart its job machine is restored and the job completes. How long detection takes in real
 * time is measured by scripts/bench-failover.ts (specs/benchmarks.md), not asserted here.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ApiClient } from '../../dms/api/client.js'
import type { NodeConfig } from '../../dms/config.js'
import { TERMINATION } from '../../dms/contracts/model.js'
import { DockerExecutor } from '../../dms/executor/docker/docker-executor.js'
import type { ExecutionResult, ExecutionSpec, RunOptions } from '../../dms/executor/executor.js'
import { silentLogger } from '../../dms/log.js'
import { BID_REQUEST_TOPIC } from '../../dms/protocol/handles.js'
import { parseJobSpec } from '../../dms/orchestrator/job-spec.js'
import type { StoredJob } from '../../dms/orchestrator/orchestrator.js'
import { jobReaches, prices, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'
import { freePort, peerIdOfDataDir, startDms, type DmsProcess } from '../helpers/processes.js'

const MiB = 1024 * 1024

/** Removes what a killed provider left in Docker, as its next start would. */
async function cleanUp(workDir: string, owner: string): Promise<void> {
  const ex = new DockerExecutor({ log: silentLogger }, { workDir, owner })
  for (const m of await ex.listRuns()) await ex.removeAllocation(m.allocationId)
}

describe('failover (separate processes, SIGKILL, real Docker)', function () {
  this.timeout(120_000)
  let net: TestNetwork | undefined
  const procs: DmsProcess[] = []

  before(() => execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' }))
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      p.child.kill('SIGKILL')
      await p.exited
    }
    await net?.stop()
    net = undefined
  })

  it('the running provider is SIGKILLed: dropped at its liveness deadline, and the job completes on another', async () => {
    // The in-process provider is dearer; the provider process is cheaper, so it wins the first round.
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 3000 }], {
      requester: { enoughBids: 2 },
    })
    const dataDir = join(net.root, 'provider-proc')
    const config: NodeConfig = {
      dataDir,
      oneHost: true,
      api: false,
      bootstrap: [...net.contractDb.addrs(), ...net.requester.addrs()],
      provider: {
        contractDb: net.contractDb.peerId,
        offer: { cpu: 1, memoryBytes: 512 * MiB, diskBytes: 256 * MiB, gpus: 0, prices: prices(1000) },
      },
    }
    await writeFile(join(net.root, 'provider.json'), JSON.stringify(config))
    // Approved before it starts, so it has its approval credential from the start.
    await net.contractDb.service.approve(await peerIdOfDataDir(dataDir))
    const doomed = await startDms(join(net.root, 'provider.json'), 'warn')
    procs.push(doomed)
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 2)

    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['sh', '-c', 'echo start; sleep 1; echo done'],
        resources: { cpu: 1, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1_000_000,
      }),
    )
    const id = posted.record.id
    // Its container has started on the provider process.
    await new Promise<void>((resolve) => {
      const off = net!.requester.orchestrator!.onUpdate((jobId, u) => {
        if (jobId === id && u.state === 'running') {
          off()
          resolve()
        }
      })
    })
    const before = await net.requester.orchestrator!.get(id)
    assert.equal(before?.record.winner?.provider, doomed.peerId, 'the cheaper provider process won')
    doomed.child.kill('SIGKILL')
    await doomed.exited

    const job: StoredJob = await jobReaches(net.requester, id)
    await cleanUp(join(dataDir, 'work'), doomed.peerId)
    const r = job.record
    assert.equal(job.state, 'completed', JSON.stringify(r.error))
    assert.equal(r.winner?.provider, net.providers[0].peerId, 'completed on the other provider')
    assert.equal(r.result?.stdout, 'start\ndone\n')
    // The dead provider: dropped by the liveness deadline (its heartbeats stopped; not the far
    // later result deadline), its contract terminated for provider fault with the whole escrow
    // back, and excluded from the re-bid.
    const [attempt] = r.attempts ?? []
    assert.equal(r.attempts?.length, 1)
    assert.equal(attempt.provider, doomed.peerId)
    assert.equal(attempt.error.code, 'PROVIDER_SILENT')
    assert.match(attempt.error.message, /^provider silent for 6000 ms \(no heartbeat\)$/)
    assert.equal(attempt.settlement?.reason, TERMINATION.providerFault)
    assert.equal(attempt.settlement?.paidToProvider, 0)
    assert.deepEqual(r.excluded, [doomed.peerId])
    assert.equal(r.history.filter((h) => h.state === 'bidding').length, 2)
    assert.equal(r.settlement?.outcome, 'settled')
    // The requester's own record of the providers, used to rank later bids.
    assert.deepEqual(await net.requester.orchestrator!.providers.get(doomed.peerId), {
      completed: 0,
      faults: 1,
    })
    assert.deepEqual(await net.requester.orchestrator!.providers.get(net.providers[0].peerId), {
      completed: 1,
      faults: 0,
    })
  })

  it('the requester is SIGKILLed mid-job: restarted, it restores the job and it completes', async () => {
    // The in-process provider's executor is the real Docker one, watched for the container's start.
    const started: Array<(spec: ExecutionSpec) => void> = []
    const root = join(process.env.TMPDIR ?? '/tmp', `dms-failover-${process.pid}`)
    await mkdir(root, { recursive: true })
    class Watched extends DockerExecutor {
      override run(spec: ExecutionSpec, options: RunOptions = {}): Promise<ExecutionResult> {
        return super.run(spec, {
          ...options,
          onEvent: (e) => {
            options.onEvent?.(e)
            if (e.type === 'started') for (const f of started.splice(0)) f(spec)
          },
        })
      }
    }
    const workDir = join(root, 'work')
    const executor = new Watched({ log: silentLogger }, { workDir, owner: `failover-${process.pid}` })
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      components: { executor },
    })
    const port = await freePort()
    const config: NodeConfig = {
      dataDir: join(net.root, 'requester-proc'),
      oneHost: true,
      listen: [`/ip4/127.0.0.1/tcp/${port}`],
      bootstrap: [...net.contractDb.addrs(), ...net.providers[0].addrs()],
      requester: { contractDb: { peer: net.contractDb.peerId, addrs: net.contractDb.addrs() } },
    }
    const configPath = join(net.root, 'requester.json')
    await writeFile(configPath, JSON.stringify(config))
    const requesterPeer = await peerIdOfDataDir(config.dataDir)
    await net.contractDb.service.approve(requesterPeer)
    await net.contractDb.service.credit(requesterPeer, 1_000_000)
    let requester = await startDms(configPath)
    procs.push(requester)

    // Posted at once: the bid request is re-published until the provider's gossip stream is up.
    const running = new Promise<ExecutionSpec>((resolve) => started.push(resolve))
    const posted = await new ApiClient(requester.socket!).ok<{ id: string }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      command: ['sh', '-c', 'echo before; until [ -f /outputs/go ]; do sleep 0.1; done; echo after'],
      resources: { cpu: 1, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 1_000_000,
    })
    const spec = await running

    requester.child.kill('SIGKILL')
    await requester.exited
    procs.splice(procs.indexOf(requester), 1)
    requester = await startDms(configPath)
    procs.push(requester)
    const finished = requester.logLine((l) => l.msg === 'job finished' && l.jobId === posted.id)
    // Only now may the job end: its result reaches the restored job.
    await writeFile(join(workDir, spec.allocationId, 'outputs', 'go'), '')
    const line = await finished
    assert.equal(line.state, 'completed', JSON.stringify(line.error))

    const job = await new ApiClient(requester.socket!).ok<StoredJob['record'] & { state: string }>(
      'GET',
      `/v1/jobs/${posted.id}`,
    )
    assert.equal(job.state, 'completed')
    assert.equal(job.result?.stdout, 'before\nafter\n')
    assert.equal(job.settlement?.outcome, 'settled')
    assert.ok((job.settlement?.paidToProvider ?? 0) > 0)
    await rm(root, { recursive: true, force: true })
    assert.deepEqual(
      job.history.map((h) => h.state),
      ['bidding', 'selecting', 'contracting', 'invoking', 'running', 'verifying', 'settling', 'completed'],
    )
  })
})
