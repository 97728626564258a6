import assert from 'node:assert/strict'
import {
  decodeEnvelope,
  ENVELOPE_WIRE,
  Envelope,
  ENVELOPE_VERSION,
  sealEnvelope,
  verifyEnvelope,
  type EnvelopeInit,
  type Handle,
} from '../../../actors/envelope.js'
import { KeyPair } from '../../../actors/identity.js'

const SEED = Uint8Array.from({ length: 32 }, (_, i) => 200 - i)
const key = KeyPair.fromSeed(SEED)
const T0 = 1_700_000_000_000

const sender: Handle = {
  publicKey: key.publicKey as Uint8Array<ArrayBuffer>,
  peer: '12D3KooWSender',
  inbox: 'client',
  addrs: ['/ip4/127.0.0.1/tcp/4001'],
}

const init = (over: Partial<EnvelopeInit> = {}): EnvelopeInit => ({
  sender,
  to: { peer: '12D3KooWReceiver', inbox: 'svc' },
  behaviour: '/test/hello',
  payload: new TextEncoder().encode('{"x":42}'),
  replyTo: { ...sender, inbox: '~reply/abc' },
  issuedAt: T0,
  ttlMs: 60_000,
  ...over,
})

const DOMAIN = new TextEncoder().encode('dms/envelope/v1\0')
const concat = (a: Uint8Array, b: Uint8Array) => {
  const out = new Uint8Array(a.length + b.length)
  out.set(a, 0)
  out.set(b, a.length)
  return out
}
const unsignedBody = (env: Envelope) => Envelope.encode({ ...env, signature: new Uint8Array(0) })
const flip = (b: Uint8Array, i: number) => {
  const out = Uint8Array.from(b)
  out[i] ^= 0x01
  return out
}

describe('actors/envelope', () => {
  it('seal -> decode -> verify round-trips every field', () => {
    const env = decodeEnvelope(sealEnvelope(key, init()))
    assert.equal(env.version, ENVELOPE_VERSION)
    assert.deepEqual(Buffer.from(env.sender!.publicKey), Buffer.from(key.publicKey))
    assert.equal(env.sender!.peer, sender.peer)
    assert.equal(env.sender!.inbox, 'client')
    assert.deepEqual(env.sender!.addrs, sender.addrs)
    assert.equal(env.toPeer, '12D3KooWReceiver')
    assert.equal(env.toInbox, 'svc')
    assert.equal(env.topic, '')
    assert.equal(env.behaviour, '/test/hello')
    assert.equal(env.issuedAt, BigInt(T0))
    assert.equal(env.expiresAt, BigInt(T0 + 60_000))
    assert.equal(env.replyTo?.inbox, '~reply/abc')
    assert.equal(new TextDecoder().decode(env.payload), '{"x":42}')
    assert.equal(env.nonce.length, 16)
    assert.equal(env.signature.length, 64)
    assert.equal(verifyEnvelope(env), true)
  })

  it('a broadcast has a topic and no addressee, and verifies', () => {
    const env = decodeEnvelope(
      sealEnvelope(key, init({ to: undefined, topic: '/dms/t', replyTo: undefined })),
    )
    assert.equal(env.toPeer, '')
    assert.equal(env.toInbox, '')
    assert.equal(env.topic, '/dms/t')
    assert.equal(env.replyTo, undefined)
    assert.equal(verifyEnvelope(env), true)
  })

  it('each seal uses a fresh nonce', () => {
    const a = decodeEnvelope(sealEnvelope(key, init()))
    const b = decodeEnvelope(sealEnvelope(key, init()))
    assert.notDeepEqual(Buffer.from(a.nonce), Buffer.from(b.nonce))
  })

  it('the signature is Ed25519 over the domain prefix || the encoding with the signature emptied', () => {
    const env = decodeEnvelope(sealEnvelope(key, init()))
    assert.deepEqual(Buffer.from(env.signature), Buffer.from(key.sign(concat(DOMAIN, unsignedBody(env)))))
  })

  describe('sealed once, checked on the bytes as they came', () => {
    it('seal gives the same bytes as encoding the signed envelope (one encode, wire unchanged)', () => {
      for (const i of [init(), init({ to: undefined, topic: 't', replyTo: undefined })]) {
        const wire = sealEnvelope(key, i)
        assert.deepEqual(Buffer.from(Envelope.encode(decodeEnvelope(wire))), Buffer.from(wire))
      }
    })

    it('verifies with its wire bytes, and no byte of them can change without failing', () => {
      const wire = sealEnvelope(key, init())
      assert.equal(verifyEnvelope(decodeEnvelope(wire), wire), true)
      for (let i = 0; i < wire.length; i++) {
        const bad = flip(wire, i)
        let env: Envelope
        try {
          env = decodeEnvelope(bad)
        } catch {
          continue // refused before the signature
        }
        assert.equal(verifyEnvelope(env, bad), false, `wire byte ${i}`)
      }
    })

    it('bytes whose last field is not the signature: checked on the envelope encoded again', () => {
      const env = decodeEnvelope(sealEnvelope(key, init()))
      // The same fields, the signature first: valid protobuf, signed as the canonical encoding.
      const sigFirst = concat(Uint8Array.of(0x62, 0x40, ...env.signature), unsignedBody(env))
      const decoded = decodeEnvelope(sigFirst)
      assert.equal(verifyEnvelope(decoded, sigFirst), true)
      assert.equal(verifyEnvelope({ ...decoded, toInbox: 'svd' }, sigFirst), false)
    })
  })

  describe('tampering breaks verification', () => {
    const fresh = () => decodeEnvelope(sealEnvelope(key, init()))

    it('flipping any byte of the payload', () => {
      const env = fresh()
      for (let i = 0; i < env.payload.length; i++)
        assert.equal(verifyEnvelope({ ...env, payload: flip(env.payload, i) }), false, `payload byte ${i}`)
    })

    it('changing any character of the behaviour', () => {
      const env = fresh()
      for (let i = 0; i < env.behaviour.length; i++) {
        const behaviour =
          env.behaviour.slice(0, i) +
          String.fromCharCode(env.behaviour.charCodeAt(i) ^ 1) +
          env.behaviour.slice(i + 1)
        assert.equal(verifyEnvelope({ ...env, behaviour }), false, `behaviour char ${i}`)
      }
    })

    it('changing expiresAt (extending or shortening the lifetime) or issuedAt', () => {
      const env = fresh()
      assert.equal(verifyEnvelope({ ...env, expiresAt: env.expiresAt + 1n }), false)
      assert.equal(verifyEnvelope({ ...env, expiresAt: env.expiresAt + 3_600_000n }), false)
      assert.equal(verifyEnvelope({ ...env, expiresAt: env.expiresAt - 1n }), false)
      assert.equal(verifyEnvelope({ ...env, issuedAt: env.issuedAt + 1n }), false)
    })

    it('redirecting to another inbox or peer', () => {
      const env = fresh()
      assert.equal(verifyEnvelope({ ...env, toInbox: 'svd' }), false)
      assert.equal(verifyEnvelope({ ...env, toInbox: '' }), false)
      assert.equal(verifyEnvelope({ ...env, toPeer: '12D3KooWOther' }), false)
    })

    it('flipping any byte of the sender key, or swapping in another key', () => {
      const env = fresh()
      const s = env.sender!
      for (let i = 0; i < s.publicKey.length; i++)
        assert.equal(
          verifyEnvelope({ ...env, sender: { ...s, publicKey: flip(s.publicKey, i) } }),
          false,
          `key byte ${i}`,
        )
      const other = KeyPair.generate().publicKey as Uint8Array<ArrayBuffer>
      assert.equal(verifyEnvelope({ ...env, sender: { ...s, publicKey: other } }), false)
    })

    it('changing the sender peer, inbox or addresses, the reply handle, nonce or version', () => {
      const env = fresh()
      const s = env.sender!
      assert.equal(verifyEnvelope({ ...env, sender: { ...s, peer: '12D3KooWMallory' } }), false)
      assert.equal(verifyEnvelope({ ...env, sender: { ...s, inbox: 'other' } }), false)
      assert.equal(verifyEnvelope({ ...env, sender: { ...s, addrs: ['/ip4/6.6.6.6/tcp/1'] } }), false)
      assert.equal(verifyEnvelope({ ...env, replyTo: { ...env.replyTo!, peer: '12D3KooWMallory' } }), false)
      assert.equal(verifyEnvelope({ ...env, replyTo: undefined }), false)
      assert.equal(verifyEnvelope({ ...env, nonce: flip(env.nonce, 0) }), false)
      assert.equal(verifyEnvelope({ ...env, version: 2 }), false)
    })

    it('a re-signature by another key over the same body', () => {
      const env = fresh()
      const mallory = KeyPair.generate()
      const forged = {
        ...env,
        signature: mallory.sign(concat(DOMAIN, unsignedBody(env))) as Uint8Array<ArrayBuffer>,
      }
      assert.equal(verifyEnvelope(forged), false)
    })

    it('flipping any byte of the wire encoding never yields a different envelope that verifies', () => {
      const bytes = sealEnvelope(key, init())
      for (let i = 0; i < bytes.length; i++) {
        let env: Envelope
        try {
          env = decodeEnvelope(flip(bytes, i))
        } catch {
          continue
        }
        // protons reads a field by number whatever its wire type, so flipping a tag's wire-type bit
        // (e.g. 0x08 -> 0x09) can decode to the very same envelope; that one may verify, nothing else.
        if (verifyEnvelope(env))
          assert.deepEqual(
            Buffer.from(Envelope.encode(env)),
            Buffer.from(bytes),
            `wire byte ${i} of ${bytes.length}`,
          )
      }
    })

    it('an envelope without a sender does not verify', () => {
      assert.equal(verifyEnvelope({ ...fresh(), sender: undefined }), false)
    })
  })

  describe('domain separation', () => {
    it('a signature over the encoding without the domain prefix does not verify', () => {
      const env = decodeEnvelope(sealEnvelope(key, init()))
      const undomained = { ...env, signature: key.sign(unsignedBody(env)) as Uint8Array<ArrayBuffer> }
      assert.equal(verifyEnvelope(undomained), false)
      // Control: the same construction with the prefix does verify, so only the prefix differs.
      const domained = {
        ...env,
        signature: key.sign(concat(DOMAIN, unsignedBody(env))) as Uint8Array<ArrayBuffer>,
      }
      assert.equal(verifyEnvelope(domained), true)
    })

    it('a signature under another domain (e.g. v2) does not verify', () => {
      const env = decodeEnvelope(sealEnvelope(key, init()))
      const v2 = new TextEncoder().encode('dms/envelope/v2\0')
      assert.equal(
        verifyEnvelope({
          ...env,
          signature: key.sign(concat(v2, unsignedBody(env))) as Uint8Array<ArrayBuffer>,
        }),
        false,
      )
    })
  })

  describe('decodeEnvelope', () => {
    it('refuses garbage', () => {
      assert.throws(() => decodeEnvelope(new Uint8Array([0xff, 0xff, 0xff])), { name: 'WireFormatError' })
      assert.throws(() => decodeEnvelope(new Uint8Array([0x12, 0x10, 0x01])), /runs past the end/)
      assert.throws(
        () => decodeEnvelope(new TextEncoder().encode('not a protobuf at all')),
        /wire type|unknown/,
      )
    })

    it('refuses a known field in another wire type, in the envelope and in a nested handle', () => {
      const good = sealEnvelope(key, init())
      // version (field 1, varint) sent length-delimited
      assert.throws(
        () => decodeEnvelope(new Uint8Array([(1 << 3) | 2, 1, 7, ...good])),
        /field 1 has wire type 2/,
      )
      // sender (field 2) holding a Handle whose peer (field 2) is a varint
      assert.throws(
        () => decodeEnvelope(new Uint8Array([(2 << 3) | 2, 2, (2 << 3) | 0, 1])),
        /field 2 has wire type 0/,
      )
      assert.doesNotThrow(() => decodeEnvelope(good))
    })

    it('ENVELOPE_WIRE matches proto/envelope.proto field for field', async () => {
      const { readFile } = await import('node:fs/promises')
      const proto = await readFile(new URL('../../../proto/envelope.proto', import.meta.url), 'utf8')
      const start = proto.indexOf('message Envelope')
      const body = proto.slice(start, proto.indexOf('}', start))
      const fields = [...body.matchAll(/^\s*(?:optional\s+)?(\w+)\s+\w+\s*=\s*(\d+);/gm)].map((m) => ({
        type: m[1],
        n: Number(m[2]),
      }))
      assert.equal(Object.keys(ENVELOPE_WIRE).length, fields.length)
      for (const f of fields) {
        const varint = ['uint32', 'uint64', 'int32', 'int64', 'bool'].includes(f.type)
        assert.equal(ENVELOPE_WIRE[f.n]?.wire, varint ? 0 : 2, `field ${f.n} (${f.type})`)
      }
    })

    it('refuses a sender with more than 16 addresses, accepts 16', () => {
      const addrs = (n: number) => Array.from({ length: n }, (_, i) => `/ip4/10.0.0.${i}/tcp/1`)
      assert.doesNotThrow(() =>
        decodeEnvelope(sealEnvelope(key, init({ sender: { ...sender, addrs: addrs(16) } }))),
      )
      assert.throws(
        () => decodeEnvelope(sealEnvelope(key, init({ sender: { ...sender, addrs: addrs(17) } }))),
        /addrs/,
      )
    })
  })
})
