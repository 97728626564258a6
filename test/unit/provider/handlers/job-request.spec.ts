/** The job-request handler: the machine locks the reservation, or the lock is refused with why. */
import assert from 'node:assert/strict'
import { waitFor } from 'xstate'
import { jobRequestHandler } from '../../../../dms/provider/handlers/job-request.js'
import { Harness } from '../../../helpers/provider-harness.js'

describe('provider/handlers/job-request', () => {
  let h: Harness
  let handle: ReturnType<typeof jobRequestHandler>
  beforeEach(async () => {
    h = await new Harness().start()
    handle = jobRequestHandler({ book: h.book })
  })
  afterEach(() => h.close())

  it('locks the bid for its requester until its invocation deadline', async () => {
    const bid = await h.bid()
    const reply = await handle(h.msg({ jobId: bid.jobId, bidId: bid.bidId }))
    assert.deepEqual(reply, { locked: true, lockedUntil: h.clock.now() + 60_000 })
    assert.equal(h.ledger.entries()[0].state, 'locked')
    assert.equal((await h.book.get(bid.bidId))?.state, 'locked')
    await assert.rejects(handle(h.msg({ jobId: bid.jobId, bidId: bid.bidId })), {
      code: 'BID_NOT_OPEN',
      message: 'bid is locked',
    })
  })

  it('refuses an unknown bid, another requester, and a lock the ledger refuses', async () => {
    await assert.rejects(handle(h.msg({ jobId: 'x', bidId: 'nope' })), { code: 'UNKNOWN_BID' })
    const bid = await h.bid()
    await assert.rejects(handle(h.msg({ jobId: bid.jobId, bidId: bid.bidId }, h.stranger)), {
      code: 'NOT_YOUR_BID',
    })
    h.fakes.failNext.lock = 'RESERVATION_EXPIRED'
    const actor = h.book.actor(bid.bidId)!
    await assert.rejects(handle(h.msg({ jobId: bid.jobId, bidId: bid.bidId })), {
      code: 'LOCK_FAILED',
      message: /cannot lock resources: lock failed/,
    })
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(h.ledger.entries(), [], 'the bid ended: its reservation is released')
  })

  it('refuses a bid whose reservation expired', async () => {
    const bid = await h.bid()
    await h.clock.advanceAsync(30_000)
    await assert.rejects(handle(h.msg({ jobId: bid.jobId, bidId: bid.bidId })), {
      code: 'BID_NOT_OPEN',
      message: 'bid is expired',
    })
  })
})
