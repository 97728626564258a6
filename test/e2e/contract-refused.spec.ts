import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import type { Clock } from '../../actors/clock.js'
import { ApiClient } from '../../dms/api/client.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'

const MiB = 1024 * 1024

/** Real time plus an offset the test can move forward. */
class ShiftedClock implements Clock {
  offset = 0
  now(): number {
    return Date.now() + this.offset
  }
}

describe('a contract the contract-db refuses', function () {
  this.timeout(60_000)
  let net: TestNetwork
  const clock = new ShiftedClock()

  before(() => execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' }))
  beforeEach(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      components: { clock },
      fund: 0, // the requester cannot pay the escrow
    })
  })
  afterEach(async () => net?.stop())

  it('fails the job with the shortfall, and the provider lock is released, not leaked', async () => {
    const api = new ApiClient(net.requester.socketPath!)
    const { id } = await api.ok<{ id: string }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      command: ['sh', '-c', ':'],
      resources: { cpu: 0.5, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 10_000,
    })
    const job = await jobReaches(net.requester, id, ['failed'])
    assert.equal(job.record.error?.code, 'CONTRACT_REFUSED')
    assert.match(job.record.error.message, /INSUFFICIENT_FUNDS|short of escrow/)
    assert.deepEqual(
      job.record.history.map((h) => h.state),
      ['bidding', 'selecting', 'requesting', 'contracting', 'failed'],
    )
    // Nothing moved at the contract-db.
    const acc = await net.contractDb.service.account(net.requester.peerId)
    assert.deepEqual([acc.balance, acc.escrow], [0, 0])
    // The provider still holds the lock it took for the job request...
    const provider = net.providers[0]
    assert.equal(provider.ledger!.summary().locked.cpu, 0.5)
    // ...until its lock TTL passes; then the sweep frees it.
    clock.offset += 61_000
    await provider.provider!.sweep()
    assert.equal(provider.ledger!.summary().locked.cpu, 0)
    assert.deepEqual(provider.ledger!.free(), provider.ledger!.getOffer()!.resources)
  })
})
