/**
 * The per-result model (specs/pricing.md, "Per result"): the escrow is the price, a completed run
 * whose result counts pays all of it, anything else pays nothing; billed by the contract-db's own
 * closing rules over a contract whose signed bid is priced per result.
 */
import assert from 'node:assert/strict'
import { claimClosing, settleClosing, terminateClosing } from '../../../dms/contract-db/billing.js'
import { checkBidTerms } from '../../../dms/contracts/checks.js'
import type { Receipt } from '../../../dms/contracts/model.js'
import { asSignedContract } from '../../../dms/protocol/document-shapes.js'
import { loadNodeConfig } from '../../../dms/config.js'
import { describePrice, escrowFor, priceProblem, priceView, quote } from '../../../dms/pricing/price.js'
import { perResult } from '../../../dms/pricing/terms.js'
import { makeContract, newParty } from '../../helpers/contracts.js'

const c = makeContract(newParty(), newParty(), 'cdb', { price: perResult(500), maxDurationSeconds: 3600 })
const t = c.terms
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

describe('pricing: per result', () => {
  it('escrows the price whatever the duration, and the contract-db accepts such terms', () => {
    assert.equal(escrowFor(perResult(500), { durationSeconds: 1 }), 500)
    assert.equal(escrowFor(perResult(500), { durationSeconds: 86_400 }), 500)
    assert.equal(t.escrow, 500)
    assert.equal(t.bid.total, 500)
    assert.doesNotThrow(() => asSignedContract(c))
    assert.equal(checkBidTerms(t), undefined)
    assert.deepEqual(
      quote(perResult(500), { cpu: 8, memoryBytes: 2 ** 34, diskBytes: 0, gpus: 1 }),
      perResult(500),
    )
  })

  it('a completed result that counts pays it all, whatever time it took', () => {
    for (const wall of [0.2, 1800, 3600]) {
      const r = receipt('completed', 0, wall)
      assert.equal(settleClosing(t, { receipt: r, verified: true }, at).paid, 500, `verified after ${wall}s`)
      assert.equal(claimClosing(t, r, at).paid, 500, 'claimed: the requester stayed silent')
      const overruled = { outcome: 'overruled' as const, reason: 'why', at: 1 }
      assert.equal(settleClosing(t, { receipt: r, verified: false, arbitration: overruled }, at).paid, 500)
    }
  })

  it('a failed run, a timeout, a cancel, an upheld rejection and a provider fault pay nothing', () => {
    const paid = (r: Receipt, verified = true) => settleClosing(t, { receipt: r, verified }, at).paid
    assert.equal(paid(receipt('failed', 3, 10)), 0, 'failed')
    assert.equal(paid(receipt('failed', -1, 0)), 0, 'never started')
    assert.equal(paid(receipt('timed_out', 137, 3600)), 0, 'timed out')
    assert.equal(paid(receipt('cancelled', 137, 10)), 0, 'cancelled run')
    const upheld = { outcome: 'upheld' as const, reason: 'why', at: 1 }
    const rejected = settleClosing(
      t,
      { receipt: receipt('completed', 0, 10), verified: false, arbitration: upheld },
      at,
    )
    assert.equal(rejected.paid, 0, 'an upheld rejection')
    assert.equal(
      terminateClosing(t, { reason: 'REQUESTER_CANCELLED', wallSeconds: 3000 }, at).paid,
      0,
      'a cancel',
    )
    assert.equal(terminateClosing(t, { reason: 'PROVIDER_FAULT' }, at).paid, 0, 'a provider fault')
  })

  it('is shown as "N per result", and bounded when it comes from a peer or the config', () => {
    assert.equal(describePrice(perResult(500)), '500 per result')
    assert.deepEqual(priceView(perResult(500)), { price: '500 per result' })
    assert.match(
      priceProblem({ ...perResult(500), amount: -1 }) ?? '',
      /price per result must be a whole number/,
    )
    assert.match(priceProblem({ ...perResult(500), amount: 10 ** 13 }) ?? '', /up to/)
    assert.match(
      priceProblem({ ...perResult(500), unit: 'hour' }) ?? '',
      /per-result price terms have no unit/,
    )
    assert.match(priceProblem({ ...perResult(500), rate: 5 }) ?? '', /have no rate/)
    const cfg = (price: unknown) => () =>
      loadNodeConfig({ dataDir: '/tmp/dms-x', provider: { contractDb: PEER, price } })
    assert.doesNotThrow(cfg({ model: 'per-result', currency: 'micro-token', amount: 500 }))
    assert.throws(cfg({ model: 'per-result', currency: 'micro-token', amount: -5 }))
    assert.throws(cfg({ model: 'per-result', currency: 'micro-token', amount: 500, unit: 'hour' }))
    assert.throws(cfg({ model: 'per-vibe', currency: 'micro-token', amount: 500 }))
  })
})

const PEER = '12D3KooWAq3nNWkBVHYBAz9wkgcxUV2d6cnDvSFx3XFe2GvF1Pbk'
