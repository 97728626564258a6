import assert from 'node:assert/strict'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { KeyPair } from '../../../actors/identity.js'
import { publicKeyOfPeer } from '../../../dms/contracts/party.js'

const peerOf = (k: KeyPair) => peerIdFromPrivateKey(privateKeyFromRaw(k.libp2pRaw())).toString()

describe('contracts/party: publicKeyOfPeer', () => {
  it('gives the key a peer id was derived from, the same when asked again (remembered)', () => {
    const a = KeyPair.generate()
    const b = KeyPair.generate()
    const pa = peerOf(a)
    assert.deepEqual(Buffer.from(publicKeyOfPeer(pa)!), Buffer.from(a.publicKey))
    assert.deepEqual(Buffer.from(publicKeyOfPeer(pa)!), Buffer.from(a.publicKey))
    assert.deepEqual(Buffer.from(publicKeyOfPeer(peerOf(b))!), Buffer.from(b.publicKey))
  })

  it('is undefined for what is not an Ed25519 peer id, asked once or twice', () => {
    for (const bad of ['', 'not-a-peer', 'QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N']) {
      assert.equal(publicKeyOfPeer(bad), undefined)
      assert.equal(publicKeyOfPeer(bad), undefined)
    }
  })

  it('stays right past its bound (10 000 peers remembered)', () => {
    const k = KeyPair.generate()
    const p = peerOf(k)
    for (let i = 0; i < 10_001; i++) publicKeyOfPeer(`junk-${i}`)
    assert.deepEqual(Buffer.from(publicKeyOfPeer(p)!), Buffer.from(k.publicKey))
  })
})
