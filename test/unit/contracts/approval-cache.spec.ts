/**
 * ApprovalCache: a credential's signature is verified once, then recognised by its signature and
 * fields; expiry and the sender are still checked each time, and a signature reused over other
 * fields is verified (and refused) again.
 */
import assert from 'node:assert/strict'
import { checkApproval, issueApproval } from '../../../dms/contracts/approval.js'
import { ApprovalCache } from '../../../dms/contracts/approval-cache.js'
import { newParty } from '../../helpers/contracts.js'

describe('contracts/approval-cache', () => {
  const cdb = newParty()
  const peer = newParty().peer
  const T0 = 1_700_000_000_000
  const cred = issueApproval(cdb.key, { peer, contractDb: cdb.peer, now: T0, ttlMs: 60_000 })
  const want = (now = T0) => ({ peer, contractDb: cdb.peer, now })

  it('verifies a signature once, then checks expiry and sender without verifying again', () => {
    let verified = 0
    const cache = new ApprovalCache(4096, (c, w, opts) => {
      if (opts?.signatureChecked !== true) verified++
      return checkApproval(c, w, opts)
    })
    assert.equal(cache.check(cred, want()), undefined)
    assert.equal(cache.size, 1)
    for (let i = 0; i < 100; i++) assert.equal(cache.check(cred, want()), undefined)
    assert.equal(cache.size, 1)
    assert.equal(cache.check(cred, want(T0 + 60_000)), 'approval_expired')
    assert.equal(cache.check(cred, { ...want(), peer: newParty().peer }), 'approval_other_peer')
    assert.equal(cache.check(undefined, want()), 'no_approval')
    assert.equal(verified, 1, 'one signature verification for 104 checks')
  })

  it('a signature reused over other fields is verified again and refused as forged', () => {
    const cache = new ApprovalCache()
    assert.equal(cache.check(cred, want()), undefined)
    const stretched = { ...cred, expiresAt: cred.expiresAt + 3_600_000 }
    assert.equal(cache.check(stretched, want()), 'approval_forged')
    const other = newParty().peer
    assert.equal(cache.check({ ...cred, peer: other }, { ...want(), peer: other }), 'approval_forged')
    const forged = { ...cred, signature: Buffer.from('x'.repeat(64)).toString('base64') }
    assert.equal(cache.check(forged, want()), 'approval_forged')
    assert.equal(cache.size, 1, 'nothing refused is remembered')
  })

  it('remembers at most maxEntries signatures, the least recently used forgotten first', () => {
    const cache = new ApprovalCache(2)
    const creds = [0, 1, 2].map((i) => issueApproval(cdb.key, { peer, contractDb: cdb.peer, now: T0 + i }))
    for (const c of creds) assert.equal(cache.check(c, want(T0 + 10)), undefined)
    assert.equal(cache.size, 2)
  })
})
