/**
 * The cancel handler: found by contract id in memory (no stored record is read), it stops a run
 * (the result follows) or gives a contract up before its run; only the contract's requester can.
 */
import assert from 'node:assert/strict'
import { waitFor } from 'xstate'
import { cancelHandler } from '../../../../dms/provider/handlers/cancel.js'
import { Harness } from '../../../helpers/provider-harness.js'
import { contracted, invoked } from './flow.js'

describe('provider/handlers/cancel', () => {
  let h: Harness
  let cancel: ReturnType<typeof cancelHandler>
  beforeEach(async () => {
    h = await new Harness().start()
    cancel = cancelHandler({ book: h.book })
  })
  afterEach(() => h.close())

  it('stops a run of its requester: the cancelled result is published and delivered', async () => {
    const { bid, contract, run } = await invoked(h)
    run.started()
    assert.deepEqual(await cancel(h.msg({ jobId: bid.jobId, contractId: contract.terms.contractId })), {
      stopping: true,
    })
    assert.deepEqual(run.cancels, ['cancelled by the requester'])
    await waitFor(h.book.actor(bid.bidId)!, (s) => s.status === 'done')
    assert.equal(h.fakes.delivered.length, 1)
    assert.deepEqual(h.ledger.entries(), [])
  })

  it("refuses another requester's contract; an unknown one is not stopping", async () => {
    const { bid, contract, run } = await invoked(h)
    await assert.rejects(
      cancel(h.msg({ jobId: bid.jobId, contractId: contract.terms.contractId }, h.stranger)),
      {
        code: 'NOT_YOUR_JOB',
      },
    )
    assert.deepEqual(run.cancels, [])
    assert.deepEqual(await cancel(h.msg({ jobId: 'x', contractId: 'no-such-contract' })), { stopping: false })
  })

  it('before the run, gives the contract up at once (resources released)', async () => {
    const { bid, contract } = await contracted(h)
    assert.deepEqual(await cancel(h.msg({ jobId: bid.jobId, contractId: contract.terms.contractId })), {
      stopping: false,
    })
    await waitFor(h.book.actor(bid.bidId)!, (s) => s.status === 'done')
    assert.deepEqual(h.ledger.entries(), [])
  })
})
