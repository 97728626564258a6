/**
 * The price module's seam (specs/pricing.md): price terms carried whole in the bid and read by every
 * party, the same amounts as dms 0.1's `pricePerHour`, and the refusal of a peer's terms that are
 * not ones this node knows.
 */
import assert from 'node:assert/strict'
import { billFor, settleClosing, terminateClosing } from '../../../dms/contract-db/billing.js'
import { checkBidTerms } from '../../../dms/contracts/checks.js'
import { bidTotalProblem } from '../../../dms/contracts/consistency.js'
import { signDoc } from '../../../dms/contracts/canonical.js'
import { DOMAIN, type Bid, type Receipt } from '../../../dms/contracts/model.js'
import { asSignedContract } from '../../../dms/protocol/document-shapes.js'
import { bill, describePrice, escrowFor, priceProblem, priceView } from '../../../dms/pricing/price.js'
import { MAX_PRICE, perHour, priceOf, type PriceTerms } from '../../../dms/pricing/terms.js'
import { makeContract, newParty, sign } from '../../helpers/contracts.js'

const requester = newParty()
const provider = newParty()

/** A contract whose bid signs `price` (and copies nothing into the terms). */
const withPrice = (price: PriceTerms, maxDurationSeconds = 60) =>
  makeContract(requester, provider, 'cdb', { price, maxDurationSeconds })

const receipt = (
  status: Receipt['status'],
  exitCode: number,
  wallSeconds: number,
  contractId = 'c',
): Receipt => ({
  contractId,
  jobId: 'j',
  allocationId: 'a',
  status,
  exitCode,
  outputsHash: 'h',
  usage: { wallSeconds, cpuSeconds: 0, peakMemoryBytes: 0 },
  finishedAt: 0,
})

/** Re-signs a bid with changed price fields, as a hostile provider would. */
function resigned(bid: Bid, change: Record<string, unknown>): Bid {
  const { signature: _, ...body } = { ...bid, ...change }
  return { ...body, signature: signDoc(provider.key, DOMAIN.bid, body) }
}

describe('pricing: price terms', () => {
  it('a dms 0.1 bid reads as per-hour terms, and bills exactly as its price terms do', () => {
    const legacy = makeContract(requester, provider, 'cdb', { pricePerHour: 3600, minJobPrice: 5 }).terms
    assert.deepEqual(priceOf(legacy.bid), perHour(3600, 5))
    const today = withPrice(perHour(3600, 5)).terms
    assert.equal(today.pricePerHour, undefined, 'the terms copy no price')
    assert.equal(today.escrow, legacy.escrow)
    const long = { activatedAt: 0, now: 3_600_000 }
    for (const [s, code, wall] of [
      ['completed', 0, 10.2],
      ['completed', 0, 1],
      ['failed', 1, 1],
      ['failed', -1, 30],
      ['timed_out', 137, 60],
    ] as const) {
      assert.equal(
        billFor(receipt(s, code, wall), wall * 1000, today),
        billFor(receipt(s, code, wall), wall * 1000, legacy),
      )
      const f = { receipt: receipt(s, code, wall), verified: true }
      assert.deepEqual(settleClosing(today, f, long), settleClosing(legacy, f, long))
    }
    const cancel = { reason: 'REQUESTER_CANCELLED' as const, wallSeconds: 7.5 }
    assert.deepEqual(terminateClosing(today, cancel, long), terminateClosing(legacy, cancel, long))
    assert.equal(terminateClosing(today, cancel, long).paid, 8)
  })

  it('per minute: escrow and pay in whole micro-tokens per started share of a minute', () => {
    const p: PriceTerms = { model: 'per-time', unit: 'minute', currency: 'micro-token', rate: 60, minimum: 0 }
    assert.equal(escrowFor(p, { durationSeconds: 90 }), 90)
    assert.equal(escrowFor(p, { start: 1000, finish: 31_000 }), 30, 'a fixed window')
    assert.equal(
      bill(p, { kind: 'result', status: 'completed', exitCode: 0, ms: 1001 }, 90, { durationSeconds: 90 }),
      2,
    )
    assert.equal(
      bill(p, { kind: 'result', status: 'completed', exitCode: 0, ms: 999_999 }, 90, { durationSeconds: 90 }),
      90,
      'capped',
    )
    assert.equal(describePrice(p), '60/minute')
    assert.deepEqual(priceView(p), { price: '60/minute' })
    assert.deepEqual(priceView(perHour(7, 0)), { price: '7/hour', pricePerHour: 7 })
  })

  it("refuses a peer's price terms it does not know: model, currency, fields, unit, amounts", () => {
    const ok = perHour(3600, 0)
    assert.equal(priceProblem(ok), undefined)
    const cases: Array<[unknown, RegExp]> = [
      [{ ...ok, model: 'per-vibe' }, /unknown price model per-vibe/],
      [{ ...ok, currency: 'usd' }, /unknown currency usd/],
      [{ ...ok, amount: 5 }, /per-time price terms have no amount/],
      [{ ...ok, unit: 'toString' }, /unknown time unit toString/],
      [{ ...ok, unit: 'fortnight' }, /unknown time unit fortnight/],
      [{ ...ok, rate: -1 }, /price per hour must be a whole number/],
      [{ ...ok, rate: 1.5 }, /price per hour must be a whole number/],
      [{ ...ok, rate: MAX_PRICE + 1 }, /up to 1000000000000/],
      [{ ...ok, minimum: -5 }, /minimum job price/],
      ['per-hour', /must be an object/],
    ]
    for (const [v, want] of cases) assert.match(priceProblem(v) ?? '', want, JSON.stringify(v))
  })

  it('the contract-db refuses terms whose signed bid carries unknown or absurd price terms, or two prices', () => {
    const c = withPrice(perHour(3600, 0))
    assert.equal(checkBidTerms(c.terms), undefined, "today's bid is accepted")
    const hostile: Array<[Record<string, unknown>, RegExp]> = [
      [{ price: { ...perHour(3600, 0), model: 'per-vibe' } }, /unknown price model/],
      [{ price: { ...perHour(3600, 0), rate: MAX_PRICE * 10 } }, /up to/],
      [{ price: { ...perHour(3600, 0), unit: 'fortnight' } }, /unknown time unit/],
      [{ pricePerHour: 3600, minJobPrice: 0 }, /both given/],
      [{ price: undefined }, /minimum job price/],
    ]
    for (const [change, want] of hostile) {
      const bid = resigned(c.terms.bid, change)
      assert.match(bidTotalProblem(bid) ?? '', want)
      const signed = sign({ ...c.terms, bid }, requester, provider)
      assert.doesNotThrow(() => asSignedContract(signed), 'within the shape: the price check refuses it')
      assert.match(checkBidTerms(signed.terms) ?? '', want)
    }
  })

  it("the document shape bounds a peer's price terms before any check", () => {
    const c = withPrice(perHour(3600, 0))
    const long = resigned(c.terms.bid, { price: { ...perHour(3600, 0), model: 'x'.repeat(100) } })
    assert.throws(() => asSignedContract(sign({ ...c.terms, bid: long }, requester, provider)))
    const extra = resigned(c.terms.bid, { price: { ...perHour(3600, 0), tip: 5 } })
    assert.throws(() => asSignedContract(sign({ ...c.terms, bid: extra }, requester, provider)))
  })
})
