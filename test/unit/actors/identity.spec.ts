import assert from 'node:assert/strict'
import nacl from 'tweetnacl'
import { KeyPair, keyFromString, keyToString, verifySignature } from '../../../actors/identity.js'

// A fixed seed so the tweetnacl comparison is reproducible.
const SEED = Uint8Array.from({ length: 32 }, (_, i) => i * 7 + 1)
const MESSAGE = new TextEncoder().encode('dms identity test message')

const flipByte = (b: Uint8Array, i: number): Uint8Array => {
  const out = Uint8Array.from(b)
  out[i] ^= 0x01
  return out
}

describe('actors/identity', () => {
  describe('KeyPair', () => {
    it('generate gives a 32-byte seed and public key, different each time', () => {
      const a = KeyPair.generate()
      const b = KeyPair.generate()
      assert.equal(a.seed.length, 32)
      assert.equal(a.publicKey.length, 32)
      assert.notDeepEqual(Buffer.from(a.publicKey), Buffer.from(b.publicKey))
      assert.notDeepEqual(Buffer.from(a.seed), Buffer.from(b.seed))
    })

    it('fromSeed(generate().seed) rebuilds the same key pair', () => {
      const a = KeyPair.generate()
      const b = KeyPair.fromSeed(a.seed)
      assert.deepEqual(Buffer.from(b.publicKey), Buffer.from(a.publicKey))
      assert.deepEqual(Buffer.from(b.seed), Buffer.from(a.seed))
      // Same key: a signature by one verifies under the other's public key and is identical (Ed25519 is deterministic).
      assert.deepEqual(Buffer.from(b.sign(MESSAGE)), Buffer.from(a.sign(MESSAGE)))
      assert.ok(verifySignature(b.publicKey, MESSAGE, a.sign(MESSAGE)))
    })

    it('fromSeed copies the seed: later changes to the caller array do not change the key', () => {
      const seed = Uint8Array.from(SEED)
      const kp = KeyPair.fromSeed(seed)
      const pub = Buffer.from(kp.publicKey)
      seed.fill(0)
      assert.deepEqual(Buffer.from(kp.seed), Buffer.from(SEED))
      assert.deepEqual(Buffer.from(KeyPair.fromSeed(kp.seed).publicKey), pub)
    })

    it('fromSeed refuses a seed that is not 32 bytes', () => {
      assert.throws(() => KeyPair.fromSeed(new Uint8Array(31)), /32 bytes, got 31/)
      assert.throws(() => KeyPair.fromSeed(new Uint8Array(64)), /32 bytes, got 64/)
      assert.throws(() => KeyPair.fromSeed(new Uint8Array(0)), /32 bytes, got 0/)
    })

    it('derives the same public key as tweetnacl from the same seed', () => {
      const ours = KeyPair.fromSeed(SEED)
      const theirs = nacl.sign.keyPair.fromSeed(SEED)
      assert.deepEqual(Buffer.from(ours.publicKey), Buffer.from(theirs.publicKey))
    })

    it('signs byte-identically to tweetnacl', () => {
      const ours = KeyPair.fromSeed(SEED)
      const theirs = nacl.sign.keyPair.fromSeed(SEED)
      for (const msg of [MESSAGE, new Uint8Array(0), new Uint8Array(1000).fill(0xab)]) {
        const sig = ours.sign(msg)
        assert.equal(sig.length, 64)
        assert.deepEqual(Buffer.from(sig), Buffer.from(nacl.sign.detached(msg, theirs.secretKey)))
        assert.ok(nacl.sign.detached.verify(msg, sig, theirs.publicKey))
      }
    })

    it('libp2pRaw is seed || public key (the form tweetnacl calls the secret key)', () => {
      const kp = KeyPair.fromSeed(SEED)
      const raw = kp.libp2pRaw()
      assert.equal(raw.length, 64)
      assert.deepEqual(Buffer.from(raw.subarray(0, 32)), Buffer.from(SEED))
      assert.deepEqual(Buffer.from(raw.subarray(32)), Buffer.from(kp.publicKey))
      assert.deepEqual(Buffer.from(raw), Buffer.from(nacl.sign.keyPair.fromSeed(SEED).secretKey))
    })
  })

  describe('verifySignature', () => {
    const kp = KeyPair.fromSeed(SEED)
    const sig = kp.sign(MESSAGE)

    it('accepts a valid signature, ours and tweetnacl-made', () => {
      assert.equal(verifySignature(kp.publicKey, MESSAGE, sig), true)
      const naclSig = nacl.sign.detached(MESSAGE, nacl.sign.keyPair.fromSeed(SEED).secretKey)
      assert.equal(verifySignature(kp.publicKey, MESSAGE, naclSig), true)
    })

    it('rejects tampered data (any byte)', () => {
      for (let i = 0; i < MESSAGE.length; i++)
        assert.equal(verifySignature(kp.publicKey, flipByte(MESSAGE, i), sig), false, `data byte ${i}`)
      assert.equal(verifySignature(kp.publicKey, MESSAGE.subarray(1), sig), false)
      assert.equal(verifySignature(kp.publicKey, new Uint8Array([...MESSAGE, 0]), sig), false)
    })

    it('rejects a tampered signature (any byte)', () => {
      for (let i = 0; i < sig.length; i++)
        assert.equal(verifySignature(kp.publicKey, MESSAGE, flipByte(sig, i)), false, `signature byte ${i}`)
    })

    it('rejects a signature by another key', () => {
      const other = KeyPair.generate()
      assert.equal(verifySignature(other.publicKey, MESSAGE, sig), false)
      assert.equal(verifySignature(kp.publicKey, MESSAGE, other.sign(MESSAGE)), false)
    })

    it('rejects wrong-length keys and signatures without throwing', () => {
      assert.equal(verifySignature(kp.publicKey.subarray(0, 31), MESSAGE, sig), false)
      assert.equal(verifySignature(new Uint8Array([...kp.publicKey, 0]), MESSAGE, sig), false)
      assert.equal(verifySignature(new Uint8Array(0), MESSAGE, sig), false)
      assert.equal(verifySignature(kp.publicKey, MESSAGE, sig.subarray(0, 63)), false)
      assert.equal(verifySignature(kp.publicKey, MESSAGE, new Uint8Array([...sig, 0])), false)
      assert.equal(verifySignature(kp.publicKey, MESSAGE, new Uint8Array(0)), false)
    })

    it('rejects other 32-byte keys (all zero, all 0xff, one bit off) without throwing', () => {
      for (const bad of [new Uint8Array(32), new Uint8Array(32).fill(0xff), flipByte(kp.publicKey, 0)])
        assert.equal(verifySignature(bad, MESSAGE, sig), false)
    })
  })

  it('keyToString / keyFromString round-trip (base64url)', () => {
    const kp = KeyPair.fromSeed(SEED)
    const s = keyToString(kp.publicKey)
    assert.match(s, /^[A-Za-z0-9_-]{43}$/)
    assert.deepEqual(Buffer.from(keyFromString(s)), Buffer.from(kp.publicKey))
  })
})
