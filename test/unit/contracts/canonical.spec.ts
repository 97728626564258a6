import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { KeyPair, verifySignature } from '../../../actors/identity.js'
import { canonicalJson } from '../../../actors/canonical-json.js'
import { hashDoc, signDoc, verifyDoc } from '../../../dms/contracts/canonical.js'
import { DOMAIN } from '../../../dms/contracts/model.js'

const key = KeyPair.fromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 100))

describe('contracts/canonical', () => {
  describe('canonicalJson', () => {
    it('sorts object keys, so key order does not matter', () => {
      assert.equal(canonicalJson({ b: 1, a: 2, c: 3 }), '{"a":2,"b":1,"c":3}')
      assert.equal(canonicalJson({ c: 3, a: 2, b: 1 }), canonicalJson({ a: 2, b: 1, c: 3 }))
    })

    it('sorts keys at every level of nesting, including inside arrays', () => {
      const a = { z: { y: 1, x: [{ q: 1, p: 2 }] }, a: null }
      const b = { a: null, z: { x: [{ p: 2, q: 1 }], y: 1 } }
      assert.equal(canonicalJson(a), '{"a":null,"z":{"x":[{"p":2,"q":1}],"y":1}}')
      assert.equal(canonicalJson(a), canonicalJson(b))
    })

    it('keeps array order', () => {
      assert.equal(canonicalJson([3, 1, 2]), '[3,1,2]')
      assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]))
    })

    it('drops undefined properties, as JSON does', () => {
      assert.equal(canonicalJson({ a: 1, b: undefined }), '{"a":1}')
      assert.equal(canonicalJson({ a: 1, b: undefined }), canonicalJson({ a: 1 }))
    })

    it('writes scalars and strings as JSON does, escaping included', () => {
      assert.equal(canonicalJson('a"b\n'), JSON.stringify('a"b\n'))
      assert.equal(canonicalJson(true), 'true')
      assert.equal(canonicalJson(null), 'null')
      assert.equal(canonicalJson(1.5), '1.5')
      assert.equal(canonicalJson({ 'k"ey': 1 }), '{"k\\"ey":1}')
    })

    it('is valid JSON that parses back to an equal value', () => {
      const doc = { terms: { escrow: 100, parties: ['a', 'b'], nested: { ok: true, n: null } }, sig: 'x' }
      assert.deepEqual(JSON.parse(canonicalJson(doc)), doc)
    })

    it('refuses NaN and infinities, also when nested', () => {
      assert.throws(() => canonicalJson(NaN), /non-finite/)
      assert.throws(() => canonicalJson(Infinity), /non-finite/)
      assert.throws(() => canonicalJson({ a: { b: [1, -Infinity] } }), /non-finite/)
      assert.throws(() => canonicalJson({ price: NaN }), /non-finite/)
    })
    it('writes an undefined array element as null, so a signature survives a JSON round trip', () => {
      const doc = { list: [1, undefined, 2] }
      assert.equal(canonicalJson(doc), '{"list":[1,null,2]}')
      const sig = signDoc(key, DOMAIN.contract, doc)
      const overTheWire = JSON.parse(JSON.stringify(doc)) as unknown
      assert.equal(verifyDoc(key.publicKey, DOMAIN.contract, overTheWire, sig), true)
    })
  })

  describe('signDoc / verifyDoc', () => {
    const terms = { contractId: 'c-1', escrow: 1000, parties: { requester: 'r', provider: 'p' } }

    it('a signature verifies under its domain, whatever the key order of the document', () => {
      const sig = signDoc(key, DOMAIN.contract, terms)
      assert.match(sig, /^[A-Za-z0-9_-]{86}$/, '64 bytes, base64url')
      assert.equal(verifyDoc(key.publicKey, DOMAIN.contract, terms, sig), true)
      const reordered = { parties: { provider: 'p', requester: 'r' }, escrow: 1000, contractId: 'c-1' }
      assert.equal(verifyDoc(key.publicKey, DOMAIN.contract, reordered, sig), true)
    })

    it('signs domain || NUL || canonical JSON', () => {
      const sig = signDoc(key, DOMAIN.receipt, terms)
      const bytes = new TextEncoder().encode(`${DOMAIN.receipt}\0${canonicalJson(terms)}`)
      assert.equal(verifySignature(key.publicKey, bytes, new Uint8Array(Buffer.from(sig, 'base64url'))), true)
    })

    it('a contract signature does not verify as a receipt, proof or settlement (domain separation)', () => {
      const sig = signDoc(key, DOMAIN.contract, terms)
      for (const other of [DOMAIN.receipt, DOMAIN.proof, DOMAIN.settlement])
        assert.equal(verifyDoc(key.publicKey, other, terms, sig), false, other)
      const receiptSig = signDoc(key, DOMAIN.receipt, terms)
      assert.equal(verifyDoc(key.publicKey, DOMAIN.contract, terms, receiptSig), false)
      assert.equal(verifyDoc(key.publicKey, DOMAIN.receipt, terms, receiptSig), true)
    })

    it('a changed document, another key, or a damaged signature does not verify', () => {
      const sig = signDoc(key, DOMAIN.contract, terms)
      assert.equal(verifyDoc(key.publicKey, DOMAIN.contract, { ...terms, escrow: 1001 }, sig), false)
      assert.equal(verifyDoc(key.publicKey, DOMAIN.contract, { ...terms, extra: 1 }, sig), false)
      assert.equal(verifyDoc(KeyPair.generate().publicKey, DOMAIN.contract, terms, sig), false)
      const damaged = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1)
      assert.equal(verifyDoc(key.publicKey, DOMAIN.contract, terms, damaged), false)
      assert.equal(verifyDoc(key.publicKey, DOMAIN.contract, terms, ''), false)
      assert.equal(verifyDoc(key.publicKey, DOMAIN.contract, terms, 'not base64 at all!'), false)
    })

    it('verifyDoc returns false (no throw) for a document that cannot be canonicalized', () => {
      const sig = signDoc(key, DOMAIN.contract, terms)
      assert.equal(verifyDoc(key.publicKey, DOMAIN.contract, { ...terms, escrow: NaN }, sig), false)
    })

    it('signDoc refuses a document with a non-finite number', () => {
      assert.throws(() => signDoc(key, DOMAIN.contract, { escrow: Infinity }), /non-finite/)
    })
  })

  describe('hashDoc', () => {
    it('is the sha256 hex of the canonical JSON, independent of key order', () => {
      const doc = { b: [1, { d: 2, c: 3 }], a: 'x' }
      assert.equal(hashDoc(doc), createHash('sha256').update('{"a":"x","b":[1,{"c":3,"d":2}]}').digest('hex'))
      assert.equal(hashDoc(doc), hashDoc({ a: 'x', b: [1, { c: 3, d: 2 }] }))
      assert.notEqual(hashDoc(doc), hashDoc({ ...doc, a: 'y' }))
    })
  })
})
