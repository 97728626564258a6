/** The funds handler on fake approvals and accounts and a manual clock: a proof for requesters only. */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../../actors/clock.js'
import { fundsHandler } from '../../../../dms/contract-db/handlers/funds.js'
import { checkFunds } from '../../../../dms/contracts/funds.js'
import type { Role } from '../../../../dms/contracts/model.js'
import { newParty } from '../../../helpers/contracts.js'
import { refusal } from '../../../helpers/contract-db.js'

describe('contract-db/handlers/funds', () => {
  const cdb = newParty()
  const requester = newParty().peer
  const provider = newParty().peer
  const clock = new ManualClock(1_800_000_000_000)
  const roles = new Map<string, Role[]>([
    [requester, ['requester']],
    [provider, ['provider']],
  ])
  const balances = new Map([[requester, 5000]])
  const funds = fundsHandler({
    self: cdb.peer,
    key: cdb.key,
    clock,
    approvals: { rolesOf: (p) => Promise.resolve(roles.get(p)) },
    accounts: { get: (p) => Promise.resolve({ balance: balances.get(p) ?? 0 }) },
  })

  it("signs an approved requester's spendable balance, valid for a minute", async () => {
    const proof = await funds(requester)
    assert.deepEqual(
      [proof.peer, proof.contractDb, proof.available, proof.expiresAt - proof.issuedAt],
      [requester, cdb.peer, 5000, 60_000],
    )
    const want = { peer: requester, contractDb: cdb.peer, now: clock.now() }
    assert.equal(checkFunds(proof, { ...want, need: 5000 }), undefined)
    assert.equal(checkFunds(proof, { ...want, need: 5001 }), 'funds_short')
    assert.equal(checkFunds(proof, { ...want, now: clock.now() + 60_000, need: 1 }), 'funds_expired')
  })

  it('refuses a peer not approved, or approved without the requester role', async () => {
    assert.equal((await refusal(funds(newParty().peer))).code, 'NOT_APPROVED')
    const r = await refusal(funds(provider))
    assert.equal(r.code, 'PARTY_ROLE_NOT_APPROVED')
    assert.match(r.message, /not approved as a requester \(roles: provider\)/)
  })
})
