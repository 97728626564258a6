/**
 * A workflow survives its requester's SIGKILL (the requester in its own process, the provider
 * in-process with the real Docker executor): restarted, the workflow machine is restored from its
 * last stored transition, its running job (a pod's, two tasks in one job) is restored too, and the
 * workflow completes with every job run exactly once.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ApiClient } from '../../dms/api/client.js'
import type { NodeConfig } from '../../dms/config.js'
import { DockerExecutor } from '../../dms/executor/docker/docker-executor.js'
import type { ExecutionResult, ExecutionSpec, RunOptions } from '../../dms/executor/executor.js'
import { silentLogger } from '../../dms/log.js'
import type { WorkflowView } from '../../dms/cli/workflow.js'
import { startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'
import { freePort, peerIdOfDataDir, startDms, type DmsProcess } from '../helpers/processes.js'

const MiB = 1024 * 1024

describe('workflow restore (requester SIGKILLed, real Docker)', function () {
  this.timeout(120_000)
  let net: TestNetwork | undefined
  const procs: DmsProcess[] = []
  const root = join(process.env.TMPDIR ?? '/tmp', `dms-wf-restart-${process.pid}`)

  before(() => execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' }))
  after(async () => {
    for (const p of procs.splice(0)) {
      p.child.kill('SIGKILL')
      await p.exited
    }
    await net?.stop()
    await rm(root, { recursive: true, force: true })
  })

  it('killed while its first job (a pod) runs: restarted, the workflow completes and no job runs twice', async () => {
    // The provider's real Docker executor, watched: every container start is recorded.
    const runs: ExecutionSpec[] = []
    const started: Array<(spec: ExecutionSpec) => void> = []
    await mkdir(root, { recursive: true })
    class Watched extends DockerExecutor {
      override run(spec: ExecutionSpec, options: RunOptions = {}): Promise<ExecutionResult> {
        return super.run(spec, {
          ...options,
          onEvent: (e) => {
            options.onEvent?.(e)
            if (e.type === 'started') {
              runs.push(spec)
              for (const f of started.splice(0)) f(spec)
            }
          },
        })
      }
    }
    const workDir = join(root, 'work')
    const executor = new Watched({ log: silentLogger }, { workDir, owner: `wf-restart-${process.pid}` })
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

    const job = (script: string) => ({
      image: TEST_IMAGE,
      command: ['sh', '-c', script],
      resources: { cpu: 0.5, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 100_000,
    })
    const first = new Promise<ExecutionSpec>((resolve) => started.push(resolve))
    const posted = await new ApiClient(requester.socket!).ok<{ id: string }>('POST', '/v1/workflows', {
      tasks: [
        // A pod of two: first waits for a file the test writes in /pod once the requester is back.
        {
          name: 'first',
          pod: 'p',
          job: job('until [ -f /pod/go ]; do sleep 0.1; done; echo -n 41 > /outputs/n'),
        },
        { name: 'mate', pod: 'p', job: job('echo -n 1 > /outputs/m') },
        {
          name: 'second',
          job: job('echo $(( $(cat /inputs/n) + 1 ))'),
          from: [{ fromTask: 'first', path: 'n' }],
        },
      ],
    })
    const spec = await first

    requester.child.kill('SIGKILL')
    await requester.exited
    procs.splice(procs.indexOf(requester), 1)
    requester = await startDms(configPath)
    procs.push(requester)
    const finished = requester.logLine((l) => l.msg === 'workflow finished' && l.workflowId === posted.id)
    // The pod's shared folder on the provider's disk (dms/executor/common/work-dirs.ts).
    await writeFile(join(workDir, spec.allocationId, 'outputs', '.pod', 'go'), '')
    const line = await finished
    assert.equal(line.state, 'completed')

    const api = new ApiClient(requester.socket!)
    const wf = await api.ok<WorkflowView>('GET', `/v1/workflows/${posted.id}`)
    assert.deepEqual(
      Object.values(wf.tasks).map((t) => t.state),
      ['completed', 'completed', 'completed'],
    )
    assert.equal(wf.tasks.first.jobId, wf.tasks.mate.jobId, "the pod's tasks share its job")
    const second = await api.ok<{ result?: { stdout: string } }>('GET', `/v1/jobs/${wf.tasks.second.jobId}`)
    assert.equal(second.result?.stdout, '42\n')
    // Two runs in all (the pod's two containers, second's one): nothing was posted or run again.
    assert.equal(
      new Set(runs.map((r) => r.allocationId)).size,
      2,
      JSON.stringify(runs.map((r) => r.allocationId)),
    )
    assert.equal(runs.length, 3)
    const jobs = await api.ok<{ jobs: Array<{ id: string }> }>('GET', '/v1/jobs')
    assert.equal(jobs.jobs.length, 2)
  })
})
