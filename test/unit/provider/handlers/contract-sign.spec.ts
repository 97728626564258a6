/** The contract-sign handler: countersigns terms that match a locked bid, refuses anything else. */
import assert from 'node:assert/strict'
import { verifyDoc } from '../../../../dms/contracts/canonical.js'
import { DOMAIN } from '../../../../dms/contracts/model.js'
import { contractSignHandler } from '../../../../dms/provider/handlers/contract-sign.js'
import { jobRequestHandler } from '../../../../dms/provider/handlers/job-request.js'
import { Harness } from '../../../helpers/provider-harness.js'
import { contracted, handlers } from './flow.js'

describe('provider/handlers/contract-sign', () => {
  let h: Harness
  let sign: ReturnType<typeof contractSignHandler>
  beforeEach(async () => {
    h = await new Harness().start()
    sign = contractSignHandler({
      book: h.book,
      key: h.provider.key,
      peerId: () => h.provider.peer,
      contractDb: h.contractDb.peer,
    })
  })
  afterEach(() => h.close())

  const locked = async () => {
    const bid = await h.bid()
    await jobRequestHandler({ book: h.book })(h.msg({ jobId: bid.jobId, bidId: bid.bidId }))
    return bid
  }

  it('countersigns the terms of a locked bid; the bid is contracted', async () => {
    const bid = await locked()
    const contract = h.contract(bid)
    const { providerSignature } = await sign(h.msg({ contract }))
    assert.ok(verifyDoc(h.provider.key.publicKey, DOMAIN.contract, contract.terms, providerSignature))
    const rec = await h.book.get(bid.bidId)
    assert.equal(rec?.state, 'contracted')
    assert.equal(rec?.snapshot.context.contractId, contract.terms.contractId)
    // The same terms again (a requester restored in `contracting`): the same countersignature.
    assert.deepEqual(await sign(h.msg({ contract })), { providerSignature })
    const other = { ...contract, terms: { ...contract.terms, createdAt: contract.terms.createdAt + 1 } }
    await assert.rejects(sign(h.msg({ contract: other })), { code: 'BID_NOT_LOCKED' }, 'other terms')
  })

  it('refuses a bid not locked, terms that differ from the bid, and a forged signature', async () => {
    const open = await h.bid('job-open')
    await assert.rejects(sign(h.msg({ contract: h.contract(open) })), {
      code: 'BID_NOT_LOCKED',
      message: 'bid is offered',
    })
    const bid = await locked()
    const dearer = h.contract(bid)
    dearer.terms.pricePerHour += 1
    await assert.rejects(sign(h.msg({ contract: dearer })), { code: 'TERMS_MISMATCH' })
    const forged = { ...h.contract(bid), requesterSignature: h.contract(bid, h.stranger).requesterSignature }
    await assert.rejects(sign(h.msg({ contract: forged })), { code: 'BAD_SIGNATURE' })
    assert.equal((await h.book.get(bid.bidId))?.state, 'locked', 'still waiting for its contract')
  })

  it('countersigns the same terms again once the bid has gone on (invoked, run), and no others', async () => {
    const { bid, contract } = await contracted(h)
    const { providerSignature } = await sign(h.msg({ contract }))
    await handlers(h).invoke(h.msg(h.invocation(contract)))
    assert.notEqual((await h.book.get(bid.bidId))?.state, 'contracted')
    // A requester killed after its contract went on, restored in `contracting`, drafts the same terms.
    assert.deepEqual(await sign(h.msg({ contract })), { providerSignature })
    const other = { ...contract, terms: { ...contract.terms, createdAt: contract.terms.createdAt + 1 } }
    await assert.rejects(sign(h.msg({ contract: other })), { code: 'BID_NOT_LOCKED' })
    await assert.rejects(sign(h.msg({ contract }, h.stranger)), { code: 'NOT_YOUR_BID' })
  })
})
