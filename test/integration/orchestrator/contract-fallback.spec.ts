/**
 * A refusal while contracting, before the contract-db locked anything, sends the job to its next
 * bid instead of failing it. Here the cheaper provider's approval was revoked at the contract-db
 * after its (still valid) credential was issued: its bid wins, the contract-db refuses the
 * contract (PARTY_NOT_APPROVED), and the job completes on the other provider.
 */
import assert from 'node:assert/strict'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024

describe('requester: contracting falls back to the next bid', function () {
  this.timeout(60_000)
  let net: TestNetwork

  before(async () => {
    net = await startNetwork(
      [
        { cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }, // cheaper: wins, then refused
        { cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 3000 },
      ],
      { requester: { enoughBids: 2 } },
    )
  })
  after(async () => net?.stop())

  it('a contract-db refusal gives the bid up and the job completes on the next one', async () => {
    const [revoked, next] = net.providers
    assert.ok(revoked.approvals.get(net.contractDb.peerId)?.current(), 'its credential is still valid')
    await net.contractDb.service.revoke(revoked.peerId)
    const released = new Promise<string>((r) => revoked.provider!.events.once('bid-released', r))

    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['sh', '-c', 'echo fell back'],
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1_000_000,
      }),
    )
    const job = await jobReaches(net.requester, posted.record.id)
    const r = job.record
    assert.equal(job.state, 'completed', JSON.stringify(r.error))
    assert.equal(r.winner?.provider, next.peerId)
    assert.equal(r.result?.stdout, 'fell back\n')
    assert.deepEqual(
      r.history.map((h) => h.state),
      [
        'bidding',
        'selecting',
        'contracting',
        'selecting',
        'contracting',
        'invoking',
        'running',
        'verifying',
        'settling',
        'completed',
      ],
    )
    assert.deepEqual(
      r.refusals?.map((x) => [x.step, x.code, x.provider]),
      [['contract', 'PARTY_NOT_APPROVED', revoked.peerId]],
    )
    // The refused provider was told to free its lock at once; nothing of it is held.
    const revokedBid = r.bids.find((b) => b.provider === revoked.peerId)!
    assert.equal(await released, revokedBid.bidId)
    assert.deepEqual(revoked.ledger!.entries(), [])
    // Only the contract that ran exists at the contract-db.
    const contracts = await net.contractDb.service.listContracts()
    assert.deepEqual(
      contracts.map((c) => [c.contract.terms.provider.peer, c.state]),
      [[next.peerId, 'settled']],
    )
  })
})
