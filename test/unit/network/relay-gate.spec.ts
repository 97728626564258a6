/**
 * The relay's bookkeeping on a ManualClock (the relay on real hosts:
 * test/integration/network/relay.spec.ts): which credentials it keeps and how long a decision
 * waits for one, and the address a per-address cap counts.
 */
import assert from 'node:assert/strict'
import { multiaddr } from '@multiformats/multiaddr'
import { ManualClock } from '../../../actors/clock.js'
import { issueApproval } from '../../../dms/contracts/approval.js'
import { silentLogger } from '../../../dms/log.js'
import { RelayApprovals } from '../../../dms/network/relay/approvals.js'
import { presentedCredential, relayCredentialCheck } from '../../../dms/contract-clients/relay-credentials.js'
import type { ApprovalCredential } from '../../../dms/contracts/model.js'

/** A credential as a peer presents it (the bytes on the wire). */
const wire = (c: ApprovalCredential) => presentedCredential(c).bytes
import { addressKey } from '../../../dms/network/relay/gate.js'
import { newParty } from '../../helpers/contracts.js'

describe('relay: approvals and address keys', () => {
  const cdb = newParty()
  const peer = newParty()

  it('keeps a good credential with its roles until it expires; refuses forged, foreign and borrowed ones', () => {
    const clock = new ManualClock()
    const approvals = new RelayApprovals(
      { clock, log: silentLogger, credentials: relayCredentialCheck() },
      { contractDb: cdb.peer },
    )
    const cred = issueApproval(cdb.key, {
      peer: peer.peer,
      contractDb: cdb.peer,
      now: clock.now(),
      ttlMs: 60_000,
      roles: ['provider'],
    })
    assert.equal(
      approvals.present(peer.peer, wire({ ...cred, expiresAt: cred.expiresAt + 1 })),
      'approval_forged',
    )
    const other = newParty()
    assert.equal(
      approvals.present(
        peer.peer,
        wire(issueApproval(other.key, { peer: peer.peer, contractDb: other.peer, now: clock.now() })),
      ),
      'approval_other_contract_db',
    )
    assert.equal(
      approvals.present(newParty().peer, wire(cred)),
      'approval_other_peer',
      'presented by another peer',
    )
    assert.equal(approvals.approved(peer.peer), undefined)
    assert.equal(approvals.present(peer.peer, wire(cred)), undefined)
    assert.equal(
      approvals.present(peer.peer, new Uint8Array([1, 2, 3])),
      'bad_credential',
      'not a credential',
    )
    assert.deepEqual(approvals.approved(peer.peer)?.roles, ['provider'])
    clock.advance(60_000)
    assert.equal(approvals.approved(peer.peer), undefined, 'expired')
  })

  it('a decision waits for a credential on its way, and not past waitMs', async () => {
    const clock = new ManualClock()
    const approvals = new RelayApprovals(
      { clock, log: silentLogger, credentials: relayCredentialCheck() },
      { contractDb: cdb.peer, waitMs: 3000 },
    )
    const waited = approvals.await(peer.peer)
    assert.equal(approvals.waiting, 1)
    approvals.present(
      peer.peer,
      wire(issueApproval(cdb.key, { peer: peer.peer, contractDb: cdb.peer, now: clock.now() })),
    )
    assert.ok((await waited) !== undefined)
    const stranger = approvals.await(newParty().peer)
    clock.advance(3000)
    assert.equal(await stranger, undefined)
    assert.equal(approvals.waiting, 0)
  })

  it('waits for at most maxWaiting decisions at once; more are answered at once', async () => {
    const clock = new ManualClock()
    const approvals = new RelayApprovals(
      { clock, log: silentLogger, credentials: relayCredentialCheck() },
      { contractDb: cdb.peer, maxWaiting: 2 },
    )
    const a = approvals.await(newParty().peer)
    const b = approvals.await(newParty().peer)
    assert.equal(await approvals.await(newParty().peer), undefined)
    assert.equal(approvals.waiting, 2)
    clock.advance(3000)
    await Promise.all([a, b])
  })

  it('counts IPv4 addresses whole and IPv6 ones by their /64', () => {
    assert.equal(addressKey(multiaddr('/ip4/203.0.113.7/tcp/4001')), '203.0.113.7')
    assert.equal(addressKey(multiaddr('/ip6/2001:db8:1:2::5/tcp/1')), '2001:db8:1:2::/64')
    assert.equal(addressKey(multiaddr('/ip6/2001:db8:1:2:aaaa::9/tcp/1')), '2001:db8:1:2::/64')
    assert.equal(addressKey(multiaddr('/ip6/::1/tcp/1')), '0:0:0:0::/64')
  })
})
