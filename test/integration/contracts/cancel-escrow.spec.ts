/**
 * Cancel in any state leaves no escrow locked: a job is cancelled while bidding, while contracting
 * (held between the contract-db's lock and its answer), while invoking (held while its input is
 * granted) and while running (the run held by the test), and after each the requester's account
 * at the contract-db has no escrow and has its balance back, less what the provider was paid for
 * the time used. Real nodes, libp2p, level and contract-db; the executor is CountingExecutor
 * (named as such: these tests count escrow, not containers).
 */
import assert from 'node:assert/strict'
import type { ContractProof, SignedContract } from '../../../dms/contracts/model.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024
const FUND = 1_000_000

/** A gate: `wait()` resolves once `open()` was called; `reached` once someone waited on it. */
function gate() {
  let open!: () => void
  let reached!: () => void
  const opened = new Promise<void>((r) => (open = r))
  const waited = new Promise<void>((r) => (reached = r))
  return {
    open,
    reached: waited,
    wait: () => {
      reached()
      return opened
    },
  }
}

describe('cancel in any state leaves no escrow locked', function () {
  this.timeout(60_000)
  let net: TestNetwork
  const executor = new CountingExecutor(5)

  before(async () => {
    net = await startNetwork([{ cpu: 4, memoryBytes: 2048 * MiB, perCpuHour: 36_000 }], {
      components: { executor },
      requester: { bidWindowMs: 800 },
      fund: FUND,
    })
  })
  after(async () => {
    await net?.stop()
  })

  const post = (inputs?: Array<{ path: string; content: string }>) =>
    net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1_000_000,
        ...(inputs !== undefined ? { inputs } : {}),
      }),
    )

  /** Cancels the job, waits for `cancelled`, and checks the requester's account and contracts. */
  async function cancelAndCheck(id: string, whileIn: () => Promise<void> | void = () => {}) {
    await net.requester.orchestrator!.cancel(id)
    await whileIn()
    const done = await jobReaches(net.requester, id, ['cancelled', 'failed', 'completed'])
    assert.equal(done.state, 'cancelled', JSON.stringify(done.record.error))
    const contracts = (await net.contractDb.service.listContracts()).filter(
      (r) => r.contract.terms.jobId === id,
    )
    assert.ok(
      contracts.every((r) => r.state !== 'active'),
      'no contract of the job is left active',
    )
    const paid = (await net.contractDb.service.listContracts()).reduce(
      (n, r) => n + (r.settlement?.paidToProvider ?? 0),
      0,
    )
    const account = await net.contractDb.service.account(net.requester.peerId)
    assert.equal(account.escrow, 0, 'no escrow locked')
    assert.equal(account.balance, FUND - paid, 'the balance is back, less the time paid for')
    return contracts
  }

  it('while bidding: nothing was locked', async () => {
    const { record } = await post()
    await jobReaches(net.requester, record.id, ['bidding'])
    assert.deepEqual(await cancelAndCheck(record.id), [])
  })

  it('while contracting, between the lock and its answer: the contract is cancelled once the answer comes', async () => {
    const svc = net.contractDb.service
    const original = svc.verify.bind(svc)
    const held = gate()
    svc.verify = async (submitter: string, contract: SignedContract | undefined): Promise<ContractProof> => {
      const proof = await original(submitter, contract)
      await held.wait() // locked and stored; the answer is held
      return proof
    }
    try {
      const { record } = await post()
      await held.reached
      const [locked] = (await svc.listContracts()).filter((r) => r.contract.terms.jobId === record.id)
      assert.equal(locked?.state, 'active', 'the escrow is locked at the contract-db')
      const contracts = await cancelAndCheck(record.id, () => held.open())
      assert.deepEqual(
        contracts.map((r) => [r.state, r.settlement?.reason]),
        [['terminated', 'REQUESTER_CANCELLED']],
      )
    } finally {
      svc.verify = original
    }
  })

  it('while invoking: the contract is terminated REQUESTER_CANCELLED', async () => {
    const blobs = net.requester.blobs
    const original = blobs.grant.bind(blobs)
    const held = gate()
    blobs.grant = async (...args: Parameters<typeof blobs.grant>) => {
      await held.wait()
      return original(...args)
    }
    try {
      const { record } = await post([{ path: 'in.txt', content: 'x' }])
      await Promise.all([held.reached, jobReaches(net.requester, record.id, ['invoking'])])
      const contracts = await cancelAndCheck(record.id, () => held.open())
      assert.deepEqual(
        contracts.map((r) => [r.state, r.settlement?.reason]),
        [['terminated', 'REQUESTER_CANCELLED']],
      )
    } finally {
      blobs.grant = original
    }
  })

  it('while running: the run is stopped and the contract terminated for the time used', async () => {
    const held = gate()
    executor.gate = held.wait()
    try {
      const { record } = await post()
      await jobReaches(net.requester, record.id, ['running'])
      const contracts = await cancelAndCheck(record.id)
      assert.deepEqual(
        contracts.map((r) => [r.state, r.settlement?.reason]),
        [['terminated', 'REQUESTER_CANCELLED']],
      )
    } finally {
      held.open()
      executor.gate = undefined
    }
  })
})
