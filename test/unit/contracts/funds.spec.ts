/** Funds proofs checked offline (checkFunds), and FundsCache: the same answers, one verification per proof. */
import assert from 'node:assert/strict'
import { FundsCache, checkFunds, fundsReason, issueFunds } from '../../../dms/contracts/funds.js'
import { newParty } from '../../helpers/contracts.js'

describe('contracts/funds', () => {
  const cdb = newParty()
  const peer = newParty().peer
  const now = 1_800_000_000_000
  const proof = issueFunds(cdb.key, { peer, contractDb: cdb.peer, available: 1000, now })
  const want = { peer, contractDb: cdb.peer, now, need: 1000 }

  it('accepts a proof of enough funds, and says what is wrong with any other', () => {
    assert.equal(checkFunds(proof, want), undefined)
    assert.equal(checkFunds(undefined, want), 'no_funds_proof')
    assert.equal(checkFunds(proof, { ...want, need: 1001 }), 'funds_short')
    assert.equal(checkFunds(proof, { ...want, peer: newParty().peer }), 'funds_other_peer')
    assert.equal(checkFunds(proof, { ...want, contractDb: newParty().peer }), 'funds_other_contract_db')
    assert.equal(checkFunds({ ...proof, available: 10_000 }, want), 'funds_forged')
    assert.equal(checkFunds(proof, { ...want, now: now + 60_000 }), 'funds_expired')
    assert.equal(checkFunds(proof, { ...want, now: now - 31_000 }), 'funds_future')
    const other = newParty()
    const byOther = issueFunds(other.key, { peer, contractDb: cdb.peer, available: 1000, now })
    assert.equal(checkFunds(byOther, want), 'funds_forged')
  })

  it('the cache answers as checkFunds does, a changed field is verified again', () => {
    const cache = new FundsCache()
    for (let i = 0; i < 2; i++) {
      assert.equal(cache.check(proof, want), undefined)
      assert.equal(cache.check(proof, { ...want, need: 1001 }), 'funds_short')
      assert.equal(cache.check(proof, { ...want, peer: newParty().peer }), 'funds_other_peer')
      assert.equal(cache.check({ ...proof, available: 10_000 }, { ...want, need: 5000 }), 'funds_forged')
    }
    assert.equal(cache.size, 1, 'one good signature remembered')
  })

  it('names the problem in the decline reason', () => {
    assert.equal(fundsReason('no_funds_proof', undefined, 5), 'funds: no_funds_proof')
    assert.equal(
      fundsReason('funds_short', proof, 5000),
      "funds: funds_short 1000 available, this provider's bid would lock 5000",
    )
  })
})
