/**
 * A requester gone for good (real Docker, libp2p between separate nodes): it stops while its job
 * runs and never settles. The provider finishes the run, keeps its receipt, and past the
 * contract's settleBy claims its pay on it; the contract-db pays by the receipt (`claimed`,
 * REQUESTER_SILENT) and the provider's books show it. Short deadlines (1 s of grace, a claim
 * sweep every 200 ms) keep it quick.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { ApiClient } from '../../dms/api/client.js'
import type { AllocationSummary } from '../../dms/api/schemas.js'
import type { BookEntry } from '../../dms/provider/books.js'
import { parseJobSpec } from '../../dms/orchestrator/job-spec.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'

const MiB = 1024 * 1024

describe('provider claims when its requester is gone for good', function () {
  this.timeout(90_000)
  let net: TestNetwork | undefined

  afterEach(async () => {
    await net?.stop()
    net = undefined
  })

  it('is paid on its receipt past settleBy, and its books show the claim', async () => {
    net = await startNetwork(
      [{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 36_000, policy: { claimSweepMs: 200 } }],
      { contractDb: { settleGraceMs: 1000 }, requester: { bidWindowMs: 1500, startGraceSeconds: 3 } },
    )
    const provider = net.providers[0].provider!
    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['sh', '-c', 'sleep 1; echo done'],
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 4,
        maxPrice: 1_000_000,
      }),
    )
    const running = await jobReaches(net.requester, posted.record.id, ['running'])
    const contractId = running.record.contract!.terms.contractId
    const escrow = running.record.contract!.terms.escrow
    const paid = once(provider.books.events, 'settled') as Promise<[BookEntry]>
    await net.requester.stop() // gone for good: no verify, no settle

    const [entry] = await paid
    assert.equal(entry.contractId, contractId)
    assert.equal(entry.settlement?.reason, 'REQUESTER_SILENT')
    assert.ok(entry.settlement.paidToProvider > 0, 'paid for the run')
    const rec = await net.contractDb.service.contract(contractId)
    assert.deepEqual([rec?.state, rec?.closedBy], ['claimed', provider.peerId])
    assert.equal(
      (await net.contractDb.service.account(provider.peerId)).balance,
      entry.settlement.paidToProvider,
    )
    const books = await provider.books.summary()
    assert.deepEqual(
      [books.claimed, books.refunded, books.outstanding],
      [entry.settlement.paidToProvider, escrow - entry.settlement.paidToProvider, 0],
    )
    assert.deepEqual(books.requesters[net.requester.peerId], { paid: 0, unpaid: 0, claimed: 1 })
    // The same books through the node's REST API and its metrics.
    const api = new ApiClient(net.providers[0].socketPath!)
    const { allocations } = await api.ok<{ allocations: AllocationSummary[] }>('GET', '/v1/allocations')
    assert.deepEqual(
      [allocations[0].payment?.status, allocations[0].payment?.paid],
      ['claimed', entry.settlement.paidToProvider],
    )
    assert.equal((await api.ok<{ claimed: number }>('GET', '/v1/earnings')).claimed, books.claimed)
    const metrics = (await api.raw('GET', '/metrics')).body.toString('utf8')
    assert.match(metrics, new RegExp(`dms_provider_earnings\\{kind="claimed"\\} ${books.claimed}\\b`))
  })
})
