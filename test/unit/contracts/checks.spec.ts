import assert from 'node:assert/strict'
import { signDoc } from '../../../dms/contracts/canonical.js'
import { bidBody, bidSignatureOk, checkBidTerms, checkReceipt } from '../../../dms/contracts/checks.js'
import { DOMAIN } from '../../../dms/contracts/model.js'
import { asSignedReceipt } from '../../../dms/protocol/document-shapes.js'
import { makeContract, makeReceipt, newParty } from '../../helpers/contracts.js'

const req = newParty()
const prov = newParty()
const cdb = newParty().peer

describe('contracts/checks', () => {
  it('a bid is good only with its own provider signature over every field', () => {
    const { bid } = makeContract(req, prov, cdb).terms
    assert.equal(bidSignatureOk(bid), true)
    assert.equal(bidSignatureOk({ ...bid, total: bid.total + 1 }), false, 'a changed field')
    assert.equal(bidSignatureOk({ ...bid, signature: signDoc(req.key, DOMAIN.bid, bidBody(bid)) }), false)
    assert.equal(
      bidSignatureOk({ ...bid, signature: signDoc(prov.key, DOMAIN.contract, bidBody(bid)) }),
      false,
    )
  })

  it('terms must match the bid and lock exactly its total; a volunteer bid locks 0', () => {
    const c = makeContract(req, prov, cdb, { pricePerHour: 3600, maxDurationSeconds: 60, minJobPrice: 100 })
    assert.equal(checkBidTerms(c.terms), undefined)
    assert.equal(c.terms.escrow, 100, 'minimum job price')
    assert.match(checkBidTerms({ ...c.terms, image: 'other:1' }) ?? '', /image other:1 differs/)
    assert.match(checkBidTerms({ ...c.terms, escrow: 101 }) ?? '', /escrow 101 must equal/)
    assert.match(
      checkBidTerms({ ...c.terms, provider: { ...c.terms.provider, peer: req.peer } }) ?? '',
      /another provider/,
    )
    const v = makeContract(req, prov, cdb, { pricePerHour: 0, minJobPrice: 0 })
    assert.equal(checkBidTerms(v.terms), undefined)
    assert.equal(v.terms.escrow, 0)
  })

  it('a receipt must be about the contract and well typed', () => {
    const c = makeContract(req, prov, cdb)
    const r = makeReceipt(c, prov)
    assert.equal(checkReceipt(r, c.terms), undefined)
    const other = makeContract(req, prov, cdb)
    assert.match(checkReceipt(r, other.terms) ?? '', /another contract/)
    assert.match(checkReceipt({ ...r, receipt: { ...r.receipt, exitCode: 1.5 } }, c.terms) ?? '', /exitCode/)
    assert.match(
      checkReceipt({ ...r, receipt: { ...r.receipt, usage: { wallSeconds: Infinity } as never } }, c.terms) ??
        '',
      /usage/,
    )
    assert.match(checkReceipt(undefined, c.terms) ?? '', /no signed receipt/)
    const skipped = (outputsSkipped: unknown) =>
      ({ ...r, receipt: { ...r.receipt, outputsSkipped } }) as never
    assert.equal(checkReceipt(skipped({ count: 2, detail: '2 entries …' }), c.terms), undefined)
    assert.match(checkReceipt(skipped({ count: -1, detail: '' }), c.terms) ?? '', /outputsSkipped/)
    assert.match(
      checkReceipt(skipped({ count: 1, detail: 'x'.repeat(1025) }), c.terms) ?? '',
      /at most 1024 characters/,
    )
  })

  it("a receipt may state a GPU run's use, well typed, and passes the wire's shape with it", () => {
    const c = makeContract(req, prov, cdb)
    const r = makeReceipt(c, prov)
    const gpu = (more: object) =>
      ({ ...r, receipt: { ...r.receipt, usage: { ...r.receipt.usage, ...more } } }) as never
    const withGpu = gpu({ gpuSeconds: 2.4, gpuPeakMemoryBytes: 2 ** 31 })
    assert.equal(checkReceipt(withGpu, c.terms), undefined)
    assert.doesNotThrow(() => asSignedReceipt(JSON.parse(JSON.stringify(withGpu))))
    assert.match(checkReceipt(gpu({ gpuSeconds: -1 }), c.terms) ?? '', /gpuSeconds/)
    assert.match(checkReceipt(gpu({ gpuPeakMemoryBytes: NaN }), c.terms) ?? '', /gpuPeakMemoryBytes/)
    assert.throws(() => asSignedReceipt(JSON.parse(JSON.stringify(gpu({ gpuSeconds: 'a lot' })))))
  })
})
