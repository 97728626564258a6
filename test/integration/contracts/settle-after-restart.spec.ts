/**
 * The contract-db goes down between escrow lock and settlement, and comes back on the same data
 * directory and port: the requester's settlement retries and completes, nothing lost. (The same
 * with a real separate process and kill -9: contract-db-process.spec.ts.) And down when the
 * requester submits the contract: the verify is sent again until it is back.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { ContractDbNode } from '../../../dms/contract-db/node.js'
import type { ExecutionResult } from '../../../dms/executor/executor.js'
import { TestExecutor } from '../../helpers/test-executor.js'
import { hashOutputs } from '../../../dms/workload/outputs.js'
import { ApiClient } from '../../../dms/api/client.js'
import { jobReaches, startNetwork, TEST_PASSPHRASE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024

/**
 * Runs "successfully" for 0.5 s of reported wall time, once the test releases it (less than the
 * time the contract-db sees between the lock and the settle, which spans its restart: billed time
 * is capped at what it observed).
 */
class GatedExecutor extends TestExecutor {
  private onStart: () => void = () => {}
  private release: () => void = () => {}
  readonly started = new Promise<void>((r) => (this.onStart = r))
  private readonly gate = new Promise<void>((r) => (this.release = r))
  constructor() {
    super('gated')
  }
  open(): void {
    this.release()
  }
  async run(): Promise<ExecutionResult> {
    this.onStart()
    await this.gate
    return {
      status: 'completed',
      exitCode: 0,
      stdout: 'ok\n',
      stderr: '',
      truncated: false,
      outputs: [],
      outputsHash: hashOutputs([]),
      usage: { wallSeconds: 0.5, cpuSeconds: 0.1, peakMemoryBytes: 1024 },
    }
  }
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })

describe('contract-db restart between escrow lock and settlement (in-process)', function () {
  this.timeout(30_000)
  let net: TestNetwork
  let revived: ContractDbNode | undefined
  const executor = new GatedExecutor()

  beforeEach(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 3_600_000 }], {
      components: { executor },
      contractDbListen: [`/ip4/127.0.0.1/tcp/${await freePort()}`],
    })
    // See terminate-on-failure.spec.ts: wait for the requester's gossip stream to the provider.
    const pubsub = net.requester.host.services.pubsub
    const outbound = (pubsub as unknown as { streamsOutbound: Map<string, unknown> }).streamsOutbound
    while (!outbound.has(net.providers[0].peerId))
      await new Promise((r) => pubsub.addEventListener('gossipsub:heartbeat', r, { once: true }))
  })
  afterEach(async () => {
    await revived?.stop()
    await net?.stop()
  })

  it('the requester retries the settlement until the contract-db is back, and it completes', async () => {
    const { id } = await new ApiClient(net.requester.socketPath!).ok<{ id: string }>('POST', '/v1/jobs', {
      image: 'dms-test:1',
      command: ['sh', '-c', ':'],
      resources: { cpu: 1, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 1_000_000,
    })
    await executor.started // the contract is verified and its escrow locked
    const old = net.contractDb
    const escrowed = await old.service.account(net.requester.peerId)
    assert.ok(escrowed.escrow > 0)
    await old.stop() // the contract-db goes away...
    const settling = jobReaches(net.requester, id, ['settling'])
    executor.open() // ...the job finishes, and the requester tries to settle: UNREACHABLE
    await settling
    const back = Date.now()
    revived = new ContractDbNode(old.config, { passphrase: TEST_PASSPHRASE }) // same key, db and port
    await revived.start()
    const job = await jobReaches(net.requester, id)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    const s = job.record.settlement!
    assert.equal(s.outcome, 'settled')
    assert.ok(s.settledAt >= back, 'settled by the revived contract-db, after a retry')
    assert.equal(s.paidToProvider, 501) // 0.5 s at 3 600 001/hour = 500.0001, rounded up
    const acc = await revived.service.account(net.requester.peerId)
    assert.deepEqual(acc, { peer: net.requester.peerId, balance: 1_000_000 - 501, escrow: 0 })
    assert.equal((await revived.service.account(net.providers[0].peerId)).balance, 501)
  })
})

/** A gated executor that is already open: the run completes at once. */
const opened = () => {
  const e = new GatedExecutor()
  e.open()
  return e
}

describe('contract-db down while the requester submits the contract (in-process)', function () {
  this.timeout(30_000)
  let net: TestNetwork
  let revived: ContractDbNode | undefined

  beforeEach(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 3_600_000 }], {
      components: { executor: opened() },
      contractDbListen: [`/ip4/127.0.0.1/tcp/${await freePort()}`],
    })
    const pubsub = net.requester.host.services.pubsub
    const outbound = (pubsub as unknown as { streamsOutbound: Map<string, unknown> }).streamsOutbound
    while (!outbound.has(net.providers[0].peerId))
      await new Promise((r) => pubsub.addEventListener('gossipsub:heartbeat', r, { once: true }))
  })
  afterEach(async () => {
    await revived?.stop()
    await net?.stop()
  })

  it('the verify is sent again while the contract-db is UNREACHABLE, and the job completes', async () => {
    const old = net.contractDb
    // The requester holds a funds proof (valid a minute) from before: providers reserve for it.
    await net.requester.orchestrator!.funds.proofFor(1_000_000)
    await old.stop() // down before the job reaches contracting
    const { id } = await new ApiClient(net.requester.socketPath!).ok<{ id: string }>('POST', '/v1/jobs', {
      image: 'dms-test:1',
      command: ['sh', '-c', ':'],
      resources: { cpu: 1, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 1_000_000,
    })
    await jobReaches(net.requester, id, ['contracting'])
    revived = new ContractDbNode(old.config, { passphrase: TEST_PASSPHRASE }) // same key, db and port
    await revived.start()
    const job = await jobReaches(net.requester, id)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    assert.equal(job.record.proof?.contractId, job.record.contract?.terms.contractId)
    assert.equal(job.record.settlement?.outcome, 'settled')
    const acc = await revived.service.account(net.requester.peerId)
    assert.equal(acc.escrow, 0)
    assert.equal(acc.balance + (await revived.service.account(net.providers[0].peerId)).balance, 1_000_000)
  })
})
