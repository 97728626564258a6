import assert from 'node:assert/strict'
import { applyMoves, closeMoves, LedgerError, lockMoves, type Move } from '../../../dms/contract-db/ledger.js'
import type { Account } from '../../../dms/contract-db/records.js'
import { makeContract, newParty } from '../../helpers/contracts.js'

const req = newParty()
const prov = newParty()
const terms = (pricePerHour: number) =>
  makeContract(req, prov, 'cdb', { pricePerHour, maxDurationSeconds: 60 }).terms
const total = (moves: Move[]) => moves.reduce((n, m) => n + m.balance + m.escrow, 0)
const accounts = (...as: Account[]) => new Map(as.map((a) => [a.peer, a]))

describe('contract-db/ledger', () => {
  it('locking moves the escrow from the requester balance into its escrow; closing splits it', () => {
    const t = terms(3600) // escrow 60
    assert.deepEqual(lockMoves(t), [{ peer: req.peer, balance: -60, escrow: 60 }])
    assert.deepEqual(closeMoves(t, 11), [
      { peer: req.peer, balance: 49, escrow: -60 },
      { peer: prov.peer, balance: 11, escrow: 0 },
    ])
    for (const paid of [0, 11, 60]) assert.equal(total(closeMoves(t, paid)), 0)
    assert.equal(total(lockMoves(t)), 0)
  })

  it('a volunteer contract (escrow 0) moves nothing', () => {
    assert.deepEqual(lockMoves(terms(0)), [])
    assert.deepEqual(closeMoves(terms(0), 0), [])
  })

  it('applies moves per peer on the stored accounts (unknown peers start at zero)', () => {
    const t = terms(3600)
    const locked = applyMoves(accounts({ peer: req.peer, balance: 100, escrow: 0 }), lockMoves(t))
    assert.deepEqual(locked, [{ peer: req.peer, balance: 40, escrow: 60 }])
    const closed = applyMoves(accounts(...locked), closeMoves(t, 11))
    assert.deepEqual(closed, [
      { peer: req.peer, balance: 89, escrow: 0 },
      { peer: prov.peer, balance: 11, escrow: 0 },
    ])
  })

  it('the same peer on both sides gets its whole escrow back', () => {
    const t = { ...terms(3600), provider: { peer: req.peer, publicKey: '' } }
    const closed = applyMoves(accounts({ peer: req.peer, balance: 40, escrow: 60 }), closeMoves(t, 11))
    assert.deepEqual(closed, [{ peer: req.peer, balance: 100, escrow: 0 }])
  })

  it('refuses moves that make or destroy money, leave an account negative, or are not whole', () => {
    const acc = accounts({ peer: 'a', balance: 10, escrow: 0 })
    assert.throws(() => applyMoves(acc, [{ peer: 'a', balance: 5, escrow: 0 }]), LedgerError)
    assert.throws(
      () =>
        applyMoves(acc, [
          { peer: 'a', balance: -11, escrow: 0 },
          { peer: 'b', balance: 11, escrow: 0 },
        ]),
      /account a would hold balance -1/,
    )
    assert.throws(() => applyMoves(acc, [{ peer: 'a', balance: -0.5, escrow: 0.5 }]), /not whole/)
  })
})
