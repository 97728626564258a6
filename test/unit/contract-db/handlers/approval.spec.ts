/** The approval handler on a fake registry and a manual clock: a credential for approved peers only. */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../../actors/clock.js'
import { approvalHandler } from '../../../../dms/contract-db/handlers/approval.js'
import { checkApproval } from '../../../../dms/contracts/approval.js'
import { newParty } from '../../../helpers/contracts.js'

describe('contract-db/handlers/approval', () => {
  const cdb = newParty()
  const peer = newParty().peer
  const clock = new ManualClock(1_800_000_000_000)
  const approved = new Set([peer])
  const approval = approvalHandler({
    self: cdb.peer,
    key: cdb.key,
    clock,
    approvals: { isApproved: (p) => Promise.resolve(approved.has(p)) },
    ttlMs: 60_000,
  })

  it('issues an approved peer a credential signed by the contract-db, valid for the TTL from now', async () => {
    const cred = await approval(peer)
    assert.deepEqual(
      [cred.peer, cred.contractDb, cred.issuedAt, cred.expiresAt],
      [peer, cdb.peer, clock.now(), clock.now() + 60_000],
    )
    assert.equal(checkApproval(cred, { peer, contractDb: cdb.peer, now: clock.now() }), undefined)
    clock.advance(60_000)
    assert.equal(checkApproval(cred, { peer, contractDb: cdb.peer, now: clock.now() }), 'approval_expired')
  })

  it('refuses a peer that is not approved with the command that approves it', async () => {
    const stranger = newParty().peer
    await assert.rejects(approval(stranger), (err: { code: string; message: string }) => {
      assert.equal(err.code, 'NOT_APPROVED')
      assert.match(err.message, new RegExp(`dms contract-db approve ${stranger}`))
      return true
    })
  })
})
