/** The approval handler on a fake registry and a manual clock: a credential for approved peers only. */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../../actors/clock.js'
import { approvalHandler } from '../../../../dms/contract-db/handlers/approval.js'
import { checkApproval } from '../../../../dms/contracts/approval.js'
import { signDoc } from '../../../../dms/contracts/canonical.js'
import { DOMAIN, type Role } from '../../../../dms/contracts/model.js'
import { newParty } from '../../../helpers/contracts.js'

describe('contract-db/handlers/approval', () => {
  const cdb = newParty()
  const peer = newParty().peer
  const clock = new ManualClock(1_800_000_000_000)
  const approved = new Map<string, Role[]>([[peer, ['requester', 'provider']]])
  const approval = approvalHandler({
    self: cdb.peer,
    key: cdb.key,
    clock,
    approvals: { rolesOf: (p) => Promise.resolve(approved.get(p)) },
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

  it('signs the roles the peer is approved for; a receiver wanting another role refuses it', async () => {
    const relay = newParty().peer
    approved.set(relay, ['relay'])
    const cred = await approval(relay)
    assert.deepEqual(cred.roles, ['relay'])
    const want = { peer: relay, contractDb: cdb.peer, now: clock.now() }
    assert.equal(checkApproval(cred, { ...want, role: 'relay' }), undefined)
    assert.equal(checkApproval(cred, { ...want, role: 'requester' }), 'approval_role')
    assert.equal(checkApproval(cred, want), undefined, 'no role wanted: any approved peer')
    // The roles are signed: a peer cannot add one to its credential.
    assert.equal(
      checkApproval({ ...cred, roles: ['relay', 'requester'] }, { ...want, role: 'requester' }),
      'approval_forged',
    )
    // A credential issued before roles (none signed) counts as requester and provider.
    const { roles: _roles, signature: _sig, ...old } = cred
    const legacy = { ...old, signature: signDoc(cdb.key, DOMAIN.approval, old) }
    assert.equal(checkApproval(legacy, { ...want, role: 'provider' }), undefined)
    assert.equal(checkApproval(legacy, { ...want, role: 'relay' }), 'approval_role')
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
