/**
 * The fixed model (specs/pricing.md, "Fixed"): the escrow is the price, a run that ends on its own
 * pays all of it whatever its exit, a cancel pays the share of the time it held, a run that never
 * started and a provider fault pay nothing; billed by the contract-db's own closing rules and the
 * provider's cost so far, over a contract whose signed bid is priced fixed.
 */
import assert from 'node:assert/strict'
import { claimClosing, settleClosing, terminateClosing } from '../../../dms/contract-db/billing.js'
import { checkBidTerms } from '../../../dms/contracts/checks.js'
import type { Receipt } from '../../../dms/contracts/model.js'
import { asSignedContract } from '../../../dms/protocol/document-shapes.js'
import { loadNodeConfig } from '../../../dms/config.js'
import { costSoFar } from '../../../dms/provider/billing.js'
import { describePrice, escrowFor, priceProblem, priceView, quote } from '../../../dms/pricing/price.js'
import { fixedPrice, perResult, type PriceTerms } from '../../../dms/pricing/terms.js'
import { makeContract, newParty } from '../../helpers/contracts.js'

const AMOUNT = 1000
const contract = (price: PriceTerms = fixedPrice(AMOUNT)) =>
  makeContract(newParty(), newParty(), 'cdb', { price, maxDurationSeconds: 3600 })
const t = contract().terms
const receipt = (status: Receipt['status'], exitCode: number, wallSeconds: number): Receipt => ({
  contractId: t.contractId,
  jobId: t.jobId,
  allocationId: 'a',
  status,
  exitCode,
  outputsHash: 'h',
  usage: { wallSeconds, cpuSeconds: 0, peakMemoryBytes: 0 },
  finishedAt: 0,
})
const at = { activatedAt: 0, now: 3_600_000 }
const settled = (r: Receipt, terms = t) => settleClosing(terms, { receipt: r, verified: true }, at).paid
const cancelled = (wallSeconds: number) =>
  terminateClosing(t, { reason: 'REQUESTER_CANCELLED', wallSeconds }, at).paid

describe('pricing: fixed', () => {
  it('escrows the price whatever the duration, and the contract-db accepts such terms', () => {
    assert.equal(escrowFor(fixedPrice(AMOUNT), { durationSeconds: 1 }), AMOUNT)
    assert.equal(escrowFor(fixedPrice(AMOUNT), { durationSeconds: 86_400 }), AMOUNT)
    assert.equal(escrowFor(fixedPrice(AMOUNT), { start: 1000, finish: 61_000 }), AMOUNT, 'a fixed window')
    assert.equal(t.escrow, AMOUNT)
    assert.equal(t.bid.total, AMOUNT)
    assert.doesNotThrow(() => asSignedContract(contract()))
    assert.equal(checkBidTerms(t), undefined)
    const sized = { cpu: 8, memoryBytes: 2 ** 34, diskBytes: 0, gpus: 1 }
    assert.deepEqual(quote(fixedPrice(AMOUNT), sized), fixedPrice(AMOUNT))
  })

  it('a run that ends on its own pays it all, whatever its exit and the time it took', () => {
    for (const r of [
      receipt('completed', 0, 0.2),
      receipt('completed', 0, 3600),
      receipt('failed', 3, 10),
      receipt('timed_out', 137, 3600),
    ]) {
      const what = `${r.status} ${r.exitCode} after ${r.usage.wallSeconds}s`
      assert.equal(settled(r), AMOUNT, `verified: ${what}`)
      assert.equal(claimClosing(t, r, at).paid, AMOUNT, `claimed: ${what}`)
      const overruled = { outcome: 'overruled' as const, reason: 'why', at: 1 }
      assert.equal(settleClosing(t, { receipt: r, verified: false, arbitration: overruled }, at).paid, AMOUNT)
    }
    // Where it differs from per result: a failed program is paid here, not there.
    const perResultTerms = contract(perResult(AMOUNT)).terms
    assert.equal(settled(receipt('failed', 3, 10), perResultTerms), 0)
  })

  it("a requester's cancel pays the share of the time it held, rounded up; the provider sees the same", () => {
    assert.equal(cancelled(900), 250, 'a quarter of the hour bid')
    assert.equal(cancelled(1), 1, 'ceil(1000 × 1 s / 3600 s)')
    assert.equal(cancelled(0), 0)
    assert.equal(cancelled(7200), AMOUNT, 'never more than the price')
    assert.equal(settled(receipt('cancelled', 137, 1800)), 500, 'a cancelled run settled by its receipt')
    assert.equal(costSoFar(t, 900), 250, "what the provider's books say a cancel now would pay")
    assert.equal(costSoFar(t, 1e9), AMOUNT)
  })

  it('a run that never started, an upheld rejection, a provider fault and an expiry pay nothing', () => {
    assert.equal(settled(receipt('failed', -1, 0)), 0, 'never started')
    const upheld = { outcome: 'upheld' as const, reason: 'why', at: 1 }
    const rejected = settleClosing(
      t,
      { receipt: receipt('completed', 0, 10), verified: false, arbitration: upheld },
      at,
    )
    assert.equal(rejected.paid, 0, 'an upheld rejection')
    assert.equal(terminateClosing(t, { reason: 'PROVIDER_FAULT' }, at).paid, 0, 'a provider fault')
  })

  it('is shown as "N fixed", and bounded when it comes from a peer or the config', () => {
    assert.equal(describePrice(fixedPrice(AMOUNT)), '1000 fixed')
    assert.deepEqual(priceView(fixedPrice(AMOUNT)), { price: '1000 fixed' })
    assert.equal(priceProblem(fixedPrice(AMOUNT)), undefined)
    assert.match(
      priceProblem({ ...fixedPrice(AMOUNT), amount: -1 }) ?? '',
      /fixed price must be a whole number/,
    )
    assert.match(priceProblem({ ...fixedPrice(AMOUNT), amount: 0.5 }) ?? '', /whole number/)
    assert.match(priceProblem({ ...fixedPrice(AMOUNT), amount: 10 ** 13 }) ?? '', /up to/)
    assert.match(
      priceProblem({ ...fixedPrice(AMOUNT), unit: 'hour' }) ?? '',
      /fixed price terms have no unit/,
    )
    assert.match(priceProblem({ ...fixedPrice(AMOUNT), rate: 5 }) ?? '', /have no rate/)
    const cfg = (price: unknown) => () =>
      loadNodeConfig({ dataDir: '/tmp/dms-x', provider: { contractDb: PEER, price } })
    assert.doesNotThrow(cfg({ model: 'fixed', currency: 'micro-token', amount: AMOUNT }))
    assert.throws(cfg({ model: 'fixed', currency: 'micro-token', amount: -5 }))
    assert.throws(cfg({ model: 'fixed', currency: 'micro-token', amount: AMOUNT, unit: 'hour' }))
  })
})

const PEER = '12D3KooWAq3nNWkBVHYBAz9wkgcxUV2d6cnDvSFx3XFe2GvF1Pbk'
