/**
 * Hints are shown where they can be acted on (issue 20): when a provider's container engine is
 * down, its operator reads "run scripts/docker-bootstrap.sh" in its own log, and the requester is
 * told that the provider's engine was not reachable, not to run a script it does not have. Real
 * nodes on loopback; the provider's executor is a stub whose engine does not answer (Docker cannot
 * be stopped on demand here).
 */
import assert from 'node:assert/strict'
import { ExecutorUnavailableError } from '../../../dms/executor/errors.js'
import type { ExecutionResult } from '../../../dms/executor/executor.js'
import { jobReaches, startNetwork, type TestNetwork } from '../../helpers/network.js'
import { TestExecutor } from '../../helpers/test-executor.js'

const MiB = 1024 * 1024

class EngineDownExecutor extends TestExecutor {
  constructor() {
    super('engine-down')
  }
  run(): Promise<ExecutionResult> {
    return Promise.reject(new ExecutorUnavailableError('docker', 'connect ENOENT /var/run/docker.sock'))
  }
}

describe('a provider-side failure as the requester sees it', function () {
  this.timeout(30_000)
  let net: TestNetwork

  before(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 3_600_000 }], {
      components: { executor: new EngineDownExecutor() },
      fund: 10_000,
    })
  })
  after(async () => net?.stop())

  it("says the provider's engine was not reachable, with no provider-side hint", async () => {
    const { id } = await net.requester
      .orchestrator!.post({
        image: 'dms-test:1',
        command: ['sh', '-c', ':'],
        env: {},
        resources: { cpu: 1, memoryBytes: 64 * MiB, diskBytes: 0, gpus: 0 },
        maxDurationSeconds: 5,
        maxPrice: 10_000,
        retries: 0,
        providers: { allow: [], deny: [] },
      })
      .then((j) => j.record)
    const job = await jobReaches(net.requester, id, ['failed', 'completed'])
    assert.equal(job.state, 'failed')
    const message = job.record.error?.message ?? ''
    assert.match(message, /provider's container engine is not reachable/, message)
    assert.doesNotMatch(message, /scripts\/|docker-bootstrap|docker\.sock/, message)
  })
})
