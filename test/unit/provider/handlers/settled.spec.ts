/** The settled handler: accepted and dropped (the provider keeps no state on it). */
import assert from 'node:assert/strict'
import { settledHandler } from '../../../../dms/provider/handlers/settled.js'
import { Harness } from '../../../helpers/provider-harness.js'

describe('provider/handlers/settled', () => {
  it('answers nothing and changes nothing', async () => {
    const h = await new Harness().start()
    try {
      const bid = await h.bid()
      const before = await h.book.values()
      assert.equal(settledHandler()(h.msg({ contractId: 'c' } as never, h.contractDb)), undefined)
      assert.deepEqual(await h.book.values(), before)
      assert.equal(h.ledger.entries()[0].id, bid.bidId)
    } finally {
      await h.close()
    }
  })
})
