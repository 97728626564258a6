import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { systemClock, type Clock } from '../../actors/clock.js'
import { ApiClient } from '../../dms/api/client.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'

const MiB = 1024 * 1024

/** Real time plus an offset the test can move forward; real timers. */
class ShiftedClock implements Clock {
  offset = 0
  now(): number {
    return Date.now() + this.offset
  }
  setTimeout(fn: () => void, ms: number): unknown {
    return systemClock.setTimeout(fn, ms)
  }
  clearTimeout(handle: unknown): void {
    systemClock.clearTimeout(handle)
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
    })
  })
  afterEach(async () => net?.stop())

  it('fails the job with the refusal once no bid is left, and the provider lock is released at once', async () => {
    const provider = net.providers[0]
    // The operator takes the provider role away: the credential the provider holds still says
    // provider (until it expires), so it bids and is ranked; the contract-db, which checks the
    // roles it has now, refuses the contract. (A requester that cannot pay is declined before any
    // reservation: funds proofs, fair-reservations.spec.ts.)
    await net.contractDb.service.approve(provider.peerId, ['requester'])
    const released = new Promise<string>((r) => provider.provider!.events.once('bid-released', r))
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
    assert.match(job.record.error.message, /PARTY_ROLE_NOT_APPROVED/)
    // The refusal sent the job back to its next bid; there was none.
    assert.deepEqual(
      job.record.history.map((h) => h.state),
      ['bidding', 'selecting', 'contracting', 'selecting', 'failed'],
    )
    assert.deepEqual(
      job.record.refusals?.map((r) => [r.step, r.code, r.provider]),
      [['contract', 'PARTY_ROLE_NOT_APPROVED', provider.peerId]],
    )
    // Nothing moved at the contract-db.
    const acc = await net.contractDb.service.account(net.requester.peerId)
    assert.deepEqual([acc.balance, acc.escrow], [1_000_000, 0])
    // Nothing was locked there, so the requester gave the bid up: the provider frees its lock now,
    // not at the end of its lock TTL.
    assert.equal(await released, job.record.bids[0].bidId)
    assert.equal(provider.ledger!.summary().locked.cpu, 0)
    assert.deepEqual(provider.ledger!.free(), provider.ledger!.getOffer()!.resources)
  })

  it('a lock whose contract never comes (the requester went silent) is freed by the sweep after its TTL', async () => {
    const provider = net.providers[0]
    const resources = { cpu: 0.5, memoryBytes: 64 * MiB, diskBytes: 0, gpus: 0 }
    // What a job request does: the reservation becomes a lock until now + lockTtlMs (60 s).
    await provider.ledger!.reserve('bid-1', 'job-1', resources, clock.now() + 30_000)
    await provider.ledger!.lock('bid-1', { expiresAt: clock.now() + 60_000 })
    await provider.provider!.sweep()
    assert.equal(provider.ledger!.summary().locked.cpu, 0.5)
    clock.offset += 61_000
    await provider.provider!.sweep()
    assert.equal(provider.ledger!.summary().locked.cpu, 0)
    assert.deepEqual(provider.ledger!.free(), provider.ledger!.getOffer()!.resources)
  })
})
