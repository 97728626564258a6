import assert from 'node:assert/strict'
import { billFor, settleClosing, terminateClosing } from '../../../dms/contract-db/billing.js'
import type { Receipt } from '../../../dms/contracts/model.js'
import { makeContract, newParty } from '../../helpers/contracts.js'

// price 3600/hour for 60 s: escrow 60, one micro-token per started second; minimum job price 5.
const t = makeContract(newParty(), newParty(), 'cdb', {
  pricePerHour: 3600,
  maxDurationSeconds: 60,
  minJobPrice: 5,
}).terms
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

describe('contract-db/billing', () => {
  it('bills usage × price, at least the minimum for a completed run, at most the escrow', () => {
    assert.equal(billFor(receipt('completed', 0, 10.2), 10_200, t), 11)
    assert.equal(billFor(receipt('completed', 0, 1), 1000, t), 5, 'the minimum job price')
    assert.equal(billFor(receipt('failed', 1, 1), 1000, t), 1, 'no minimum for a failed run')
    assert.equal(billFor(receipt('failed', -1, 30), 30_000, t), 0, 'a run that never started')
    assert.equal(billFor(receipt('timed_out', 137, 60), 60_000, t), 60)
  })

  const long = { activatedAt: 0, now: 3_600_000 }

  it('settle: a verified receipt settles; a rejected one terminates with a full refund', () => {
    assert.deepEqual(settleClosing(t, { receipt: receipt('completed', 0, 10.2), verified: true }, long), {
      outcome: 'settled',
      paid: 11,
      ms: 10_200,
    })
    assert.deepEqual(settleClosing(t, { receipt: receipt('completed', 0, 999), verified: false }, long), {
      outcome: 'terminated',
      reason: 'REQUESTER_REJECTED_RESULT',
      paid: 0,
      ms: 60_000,
    })
  })

  it('settle: a rejection the contract-db overruled pays as a verified receipt; one it upheld refunds', () => {
    const r = receipt('completed', 0, 10.2)
    const checked = (outcome: 'overruled' | 'upheld') => ({ outcome, reason: 'why', at: 1 })
    assert.deepEqual(
      settleClosing(t, { receipt: r, verified: false, arbitration: checked('overruled') }, long),
      {
        outcome: 'settled',
        reason: 'REJECTION_OVERRULED',
        paid: 11,
        ms: 10_200,
      },
    )
    assert.deepEqual(
      settleClosing(t, { receipt: r, verified: false, arbitration: checked('upheld') }, long),
      {
        outcome: 'terminated',
        reason: 'REQUESTER_REJECTED_RESULT',
        paid: 0,
        ms: 10_200,
      },
    )
  })

  it('terminate: a provider fault pays nothing; a cancel pays the time used', () => {
    const at = { activatedAt: 1_000_000, now: 1_020_500 }
    assert.deepEqual(terminateClosing(t, { reason: 'PROVIDER_FAULT' }, at), {
      outcome: 'terminated',
      reason: 'PROVIDER_FAULT',
      paid: 0,
      ms: 0,
    })
    // No receipt: the time since the escrow was locked (20.5 s: 21 micro-tokens).
    assert.deepEqual(terminateClosing(t, { reason: 'REQUESTER_CANCELLED' }, at), {
      outcome: 'terminated',
      reason: 'REQUESTER_CANCELLED',
      paid: 21,
      ms: 20_500,
    })
    // With the provider's receipt: its wall time, capped at the max duration.
    assert.equal(terminateClosing(t, { reason: 'REQUESTER_CANCELLED', wallSeconds: 3 }, at).paid, 3)
    assert.equal(terminateClosing(t, { reason: 'REQUESTER_CANCELLED', wallSeconds: 900 }, long).paid, 60)
  })

  it('bills no more time than the contract-db observed, whatever the receipt claims', () => {
    // A receipt signed 200 ms after the lock claiming the whole max duration (60 s).
    const soon = { activatedAt: 1_000_000, now: 1_000_200 }
    const inflated = receipt('completed', 0, 60)
    assert.deepEqual(settleClosing(t, { receipt: inflated, verified: true }, soon), {
      outcome: 'settled',
      paid: 5, // the minimum job price: 200 ms cost 1
      ms: 200,
    })
    assert.equal(settleClosing(t, { receipt: receipt('failed', 1, 60), verified: true }, soon).paid, 1)
    // A cancel with the provider's stopping receipt is capped the same way (20.5 s observed).
    const at = { activatedAt: 1_000_000, now: 1_020_500 }
    assert.equal(terminateClosing(t, { reason: 'REQUESTER_CANCELLED', wallSeconds: 60 }, at).paid, 21)
  })
})
