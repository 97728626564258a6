/** The bid-release handler: its requester frees a bid before its run; nobody else can. */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { bidReleaseHandler } from '../../../../dms/provider/handlers/bid-release.js'
import { Harness } from '../../../helpers/provider-harness.js'
import { invoked } from './flow.js'

describe('provider/handlers/bid-release', () => {
  let h: Harness
  let release: ReturnType<typeof bidReleaseHandler>
  beforeEach(async () => {
    h = await new Harness().start()
    release = bidReleaseHandler({ book: h.book, events: h.events })
  })
  afterEach(() => h.close())

  it("frees its requester's bid at once and says so", async () => {
    const bid = await h.bid()
    const released = once(h.events, 'bid-released')
    await release(h.msg({ jobId: bid.jobId, bidId: bid.bidId }))
    assert.deepEqual(await released, [bid.bidId])
    assert.deepEqual(h.ledger.entries(), [])
    assert.equal((await h.book.get(bid.bidId))?.state, 'released')
  })

  it('ignores another peer, another job, and a bid already invoked', async () => {
    const bid = await h.bid()
    await release(h.msg({ jobId: bid.jobId, bidId: bid.bidId }, h.stranger))
    await release(h.msg({ jobId: 'other-job', bidId: bid.bidId }))
    assert.equal(h.ledger.entries().length, 1)
    const run = await invoked(h, 'job-2')
    await release(h.msg({ jobId: 'job-2', bidId: run.bid.bidId }))
    assert.equal(h.ledger.entries().find((e) => e.id === run.bid.bidId)?.state, 'allocated')
  })
})
