import assert from 'node:assert/strict'
import { keyToString } from '../../../actors/identity.js'
import { BadPeerIdError, handleOf, INBOX, publicKeyOf } from '../../../dms/protocol/handles.js'
import { newParty } from '../../helpers/contracts.js'

describe('dms/protocol/handles', () => {
  it("handleOf builds a peer's inbox handle, expecting replies signed by the peer's key", () => {
    const who = newParty()
    const h = handleOf(who.peer, INBOX.provider, ['/ip4/127.0.0.1/tcp/1'])
    assert.equal(h.peer, who.peer)
    assert.equal(h.inbox, 'provider')
    assert.deepEqual(h.addrs, ['/ip4/127.0.0.1/tcp/1'])
    assert.equal(keyToString(h.publicKey), keyToString(who.key.publicKey))
    assert.deepEqual(handleOf(who.peer, INBOX.blobs).addrs, [], 'no addresses: the peer store finds it')
  })

  it('a peer id without an Ed25519 key is refused with BAD_PEER_ID, naming it', () => {
    for (const bad of ['p', '', 'QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N']) {
      assert.throws(
        () => handleOf(bad, INBOX.contractDb),
        (err: unknown) =>
          err instanceof BadPeerIdError &&
          err.code === 'BAD_PEER_ID' &&
          err.message.startsWith(`${bad} is not an Ed25519 peer id`),
      )
      assert.throws(() => publicKeyOf(bad), BadPeerIdError)
    }
  })
})
