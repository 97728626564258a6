/**
 * `/dms/job/cancel` finds its contract without reading the provider's stored records: a peer
 * sending cancels cannot make the provider scan every bid and allocation it ever had for each
 * one. Real nodes on 127.0.0.1; the provider's level database is watched for range reads.
 */
import assert from 'node:assert/strict'
import { W } from '../../../dms/protocol/behaviours.js'
import { startNetwork, type TestNetwork } from '../../helpers/network.js'
import type { TestPeer } from '../../helpers/peers.js'
import { approvedRogueRequester, bidRequest } from '../../helpers/rogue.js'

const MiB = 1024 * 1024

describe('provider: a cancel reads no stored records', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let rogue: TestPeer
  afterEach(async () => {
    await rogue?.stop()
    await net?.stop()
  })

  it('answers cancels from memory, however many bids the provider has stored', async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }])
    const a = await approvedRogueRequester(net)
    rogue = a.rogue
    const { provider, approval, funds, r, to } = a
    // Stored bids: each one made, then given up.
    for (let i = 0; i < 10; i++) {
      await r.publish(bidRequest(`stored-${i}`, 0.1, approval, funds))
      await r.answered(i + 1)
      const bid = r.answers[i].bid!
      const released = new Promise((resolve) => provider.provider!.events.once('bid-released', resolve))
      await r.actor.send(to, W.bidRelease, { jobId: bid.jobId, bidId: bid.bidId })
      await released
    }
    assert.ok((await provider.provider!.bids.values()).length >= 10)

    // Every range read of the provider's database from now on, by the key range it asked for.
    const db = provider.db as unknown as Record<'iterator' | 'keys' | 'values', (o?: object) => unknown>
    const ranges: string[] = []
    for (const m of ['iterator', 'keys', 'values'] as const) {
      const original = db[m].bind(db)
      db[m] = (o?: object) => {
        ranges.push(JSON.stringify(o ?? {}))
        return original(o)
      }
    }
    for (let i = 0; i < 5; i++) {
      const reply = await r.actor.request(to, W.cancel, { jobId: 'x', contractId: `no-such-contract-${i}` })
      assert.deepEqual(reply, { stopping: false })
    }
    assert.deepEqual(
      ranges.filter((o) => /provider|allocations/.test(o)),
      [],
      'no range of bids or allocations was read',
    )
  })
})
